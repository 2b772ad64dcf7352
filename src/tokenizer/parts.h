// The stages of the encode pipeline (added tokens → normalizer → pre-tokenizer →
// model → post-processor) and the decode table. Loaders (llama2.c, GGUF,
// tokenizer.json) assemble a Pipeline; Tokenizer runs it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/vocab.h"

namespace cairn::tok {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void apply(std::string& text) const = 0;  // rewrites text in place
};

// Text cut into words: spans [begin, end) into `text`.
struct Words {
  std::string text;
  std::vector<std::pair<uint32_t, uint32_t>> spans;
  bool first_segment = true;  // the segment starts the input (Metaspace prepend_scheme "first")
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void apply(Words& words) const = 0;  // splits (and may rewrite) the words
};

class Model {
 public:
  virtual ~Model() = default;
  // Appends the ids of one pre-tokenized word. Must be thread-safe (const, no caches).
  virtual void encode(std::string_view word, std::vector<int32_t>& out) const = 0;
};

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  virtual void apply(std::vector<int32_t>& ids) const = 0;  // adds special tokens around ids
};

// What each id decodes to, precomputed at load: decode is concatenation of
// token_bytes, one leading space of the output stripped when strip_leading_space,
// then lossy UTF-8 repair.
struct DecodeTable {
  std::vector<std::string> token_bytes;
  bool strip_leading_space = false;
};

struct Pipeline {
  Vocab vocab;
  AddedTokens added;                       // matched in the raw text
  AddedTokens added_normalized;            // HF "normalized": true, matched after normalization
  std::unique_ptr<Normalizer> normalizer;  // may be null
  std::unique_ptr<PreTokenizer> pre_tokenizer;  // may be null: the segment is one word
  std::unique_ptr<Model> model;
  std::unique_ptr<PostProcessor> post_processor;  // may be null
  DecodeTable decode;
  int32_t bos_id = -1;
  std::vector<int32_t> eos_ids;
  int32_t pad_id = -1;
  int32_t unk_id = -1;
  std::string chat_template;  // from tokenizer_config.json or GGUF metadata, may be empty
  std::string source;         // the file it came from, for messages
};

// Decoded bytes of a SentencePiece piece: the space marker becomes ' ', "<0xXX>"
// of a byte token becomes that byte.
std::string sentencepiece_piece_bytes(std::string_view piece, std::string_view marker,
                                      bool is_byte_token);
// Parses "<0xXX>" into a byte; -1 when the piece is not of that form.
int parse_byte_piece(std::string_view piece);

}  // namespace cairn::tok
