// Text ↔ token ids for every vocabulary cairn reads: HF tokenizer.json (with its
// tokenizer_config.json / special_tokens_map.json / generation_config.json),
// GGUF vocabularies (tokenizer.ggml.*) and llama2.c tokenizer.bin files.
//
//   auto tok = cairn::tok::load_tokenizer("models/llama3");   // folder or file
//   std::vector<int32_t> ids = tok->encode("Hello", {.add_special_tokens = true});
//   std::string text = tok->decode(ids);
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::tok {

struct Pipeline;
struct Words;
class WordCache;

struct EncodeOptions {
  bool add_bos = false;        // prepend BOS (if the vocabulary has one and it is not there)
  bool parse_special = false;  // special-token text ("<|im_start|>") becomes that token
  bool add_special_tokens =
      false;  // run the post-processor (HF TemplateProcessing, GGUF add_bos/eos)
};

class Tokenizer {
 public:
  explicit Tokenizer(std::unique_ptr<Pipeline> pipeline);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Thread-safe. Invalid UTF-8 in text is tokenized byte by byte where the
  // vocabulary can (byte-level, byte fallback), else as the unknown token.
  std::vector<int32_t> encode(std::string_view text, const EncodeOptions& options = {}) const;
  // Always valid UTF-8 (invalid byte runs become U+FFFD). Ids out of range are skipped.
  std::string decode(std::span<const int32_t> ids, bool skip_special = true) const;

  const std::string& piece(int32_t id) const;  // the raw vocabulary string; "" when out of range
  int32_t token_to_id(std::string_view piece) const;  // -1 when absent
  int32_t vocab_size() const;
  int32_t bos_id() const;  // -1 when none
  const std::vector<int32_t>& eos_ids() const;
  int32_t pad_id() const;                    // -1 when none
  int32_t unk_id() const;                    // -1 when none
  bool is_special(int32_t id) const;         // control tokens (BOS, EOS, chat markers)
  const std::string& chat_template() const;  // "" when the files carry none
  const std::string& source() const;         // the path it was loaded from

  // Decoding in pieces, for StreamingDetokenizer: the bytes id contributes (not
  // yet UTF-8 repaired), and whether the output's first space is dropped.
  void append_token_bytes(int32_t id, bool skip_special, std::string& out) const;
  bool strips_leading_space() const;

 private:
  void encode_text(std::string_view text, bool first_segment, std::vector<int32_t>& out) const;
  void pre_tokenize_and_encode(Words& words, std::vector<int32_t>& out) const;
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  std::unique_ptr<Pipeline> p_;
  std::unique_ptr<WordCache> cache_;  // pre-tokenized words repeat
};

// Loads a model folder (tokenizer.json [+ tokenizer_config.json,
// special_tokens_map.json, generation_config.json], else tokenizer.bin / tok*.bin),
// a tokenizer.json path, a .gguf file or a llama2.c tokenizer .bin.
// Throws cairn::Error naming the path (and JSON path or GGUF key) at fault.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path);

// Feeds ids one at a time and returns only complete UTF-8 text; the concatenation
// of every feed() and the final flush() equals Tokenizer::decode of all ids.
class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, bool skip_special = true);
  std::string feed(int32_t id);  // the newly completed text (possibly empty)
  std::string flush();           // what is held back, repaired; call at the end
  void reset();

 private:
  const Tokenizer* tokenizer_;
  bool skip_special_;
  bool strip_pending_;   // the output's first space may still need dropping
  std::string pending_;  // bytes of an incomplete UTF-8 character
};

}  // namespace cairn::tok
