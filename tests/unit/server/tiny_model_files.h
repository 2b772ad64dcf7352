// A tiny byte-level BPE vocabulary (ids 0–2 ChatML specials, then the 256
// bytes, no merges) with a ChatML template, written to a scratch folder: the
// server's parsing needs a tokenizer and a template, not a model.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace cairn::test {

// GPT-2's byte → printable code point mapping, as UTF-8.
inline std::string byte_level_char(int b) {
  bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  int cp = b;
  if (!printable) {
    int n = 0;
    for (int x = 0; x < b; ++x)
      if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255))) ++n;
    cp = 256 + n;
  }
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

// Writes tokenizer.json and tokenizer_config.json into `dir`; returns dir.
inline std::string write_tiny_tokenizer(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  nlohmann::json vocab = nlohmann::json::object();
  const char* specials[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  nlohmann::json added = nlohmann::json::array();
  for (int i = 0; i < 3; ++i) {
    vocab[specials[i]] = i;
    added.push_back({{"id", i},
                     {"content", specials[i]},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  for (int b = 0; b < 256; ++b) vocab[byte_level_char(b)] = 3 + b;
  nlohmann::json byte_level = {{"type", "ByteLevel"},
                               {"add_prefix_space", false},
                               {"trim_offsets", true},
                               {"use_regex", true}};
  nlohmann::json tok = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer", byte_level},
      {"post_processor", nullptr},
      {"decoder", byte_level},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}}};
  std::ofstream(dir / "tokenizer.json") << tok.dump();
  nlohmann::json config = {
      {"bos_token", "<|endoftext|>"},
      {"eos_token", "<|im_end|>"},
      {"add_bos_token", false},
      {"chat_template",
       "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
       "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt "
       "%}{{ '<|im_start|>assistant\\n' }}{% endif %}"}};
  std::ofstream(dir / "tokenizer_config.json") << config.dump();
  return dir.string();
}

}  // namespace cairn::test
