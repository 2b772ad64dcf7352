// Encoding arbitrary bytes with a byte-level tokenizer (regex split, NFC,
// added tokens) and an SPM-style one (byte fallback): never a crash; the
// byte-level round trip is lossless on the repaired text; streaming decode
// equals one-shot decode and is valid UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "tokenizer/byte_level.h"
#include "tokenizer/loaders.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace {

using cairn::tok::Tokenizer;

Tokenizer* byte_level() {
  static Tokenizer* tok = [] {
    nlohmann::json vocab = nlohmann::json::object();
    for (int b = 0; b < 256; ++b) vocab[cairn::tok::byte_level_char(static_cast<uint8_t>(b))] = b;
    vocab["he"] = 256;
    vocab["<|end|>"] = 257;
    const nlohmann::json j = {
        {"model",
         {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"h e"}}, {"ignore_merges", true}}},
        {"normalizer", {{"type", "NFC"}}},
        {"added_tokens", {{{"id", 257}, {"content", "<|end|>"}, {"special", true}}}},
        {"pre_tokenizer",
         {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"},
             {"pattern",
              {{"Regex",
                R"((?i:'s|'t)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}}},
             {"behavior", "Isolated"}},
            {{"type", "ByteLevel"}, {"use_regex", false}}}}}},
        {"decoder", {{"type", "ByteLevel"}}}};
    return new Tokenizer(cairn::tok::load_hf_text(j.dump(), "byte-level.json"));
  }();
  return tok;
}

Tokenizer* sentencepiece() {
  static Tokenizer* tok = [] {
    nlohmann::json vocab = {{"<unk>", 0}, {"\u2581", 1}, {"a", 2}, {"\u2581a", 3}};
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      vocab[name] = 4 + b;
    }
    const nlohmann::json j = {
        {"model",
         {{"type", "BPE"},
          {"vocab", vocab},
          {"merges", {"\u2581 a"}},
          {"byte_fallback", true},
          {"unk_token", "<unk>"},
          {"fuse_unk", true}}},
        {"normalizer",
         {{"type", "Sequence"},
          {"normalizers",
           {{{"type", "Prepend"}, {"prepend", "\u2581"}},
            {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}}},
        {"decoder",
         {{"type", "Sequence"},
          {"decoders",
           {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
            {{"type", "ByteFallback"}},
            {{"type", "Fuse"}},
            {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}}};
    return new Tokenizer(cairn::tok::load_hf_text(j.dump(), "sentencepiece.json"));
  }();
  return tok;
}

void check_streaming(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  cairn::tok::StreamingDetokenizer stream(tok);
  std::string streamed;
  for (int32_t id : ids) streamed += stream.feed(id);
  streamed += stream.flush();
  if (streamed != tok.decode(ids) || !cairn::tok::is_valid_utf8(streamed)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string repaired;
  cairn::tok::append_utf8_lossy(text, true, repaired);
  const Tokenizer& bl = *byte_level();
  const auto ids = bl.encode(text);
  // NFC may change the text, so compare against the normalized round trip of itself.
  if (bl.decode(bl.encode(bl.decode(ids))) != bl.decode(ids)) std::abort();
  check_streaming(bl, ids);
  check_streaming(bl, std::vector<int32_t>(data, data + size));  // raw bytes as ids
  const Tokenizer& spm = *sentencepiece();
  const auto spm_ids = spm.encode(text, {.parse_special = true});
  // Lossless unless the text holds the space marker itself.
  if (repaired.find("\xE2\x96\x81") == std::string::npos && spm.decode(spm_ids) != repaired)
    std::abort();
  check_streaming(spm, spm_ids);
  return 0;
}
