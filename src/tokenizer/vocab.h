// The token table every tokenizer shares: id ↔ piece, SentencePiece scores and
// each token's kind (the GGUF token_type values, which HF's special flags map onto).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/flat_index.h"

namespace cairn::tok {

enum class TokenKind : uint8_t {
  kNormal,
  kUnknown,
  kControl,      // special: BOS/EOS/chat markers; matched in text only with parse_special
  kUserDefined,  // added, non-special: always matched in text before the model
  kUnused,
  kByte,  // a "<0xXX>" byte-fallback token
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class Vocab {
 public:
  Vocab() = default;
  Vocab(const Vocab&) = delete;  // ids_ points into pieces_
  Vocab& operator=(const Vocab&) = delete;
  // Grows the table to n_tokens entries (new ones empty, kind kUnused).
  void resize(size_t n_tokens);
  // Sets entry id (growing the table if needed); the first id set for a piece wins lookups.
  // Setting an id again with another piece leaves the old piece unfindable.
  void set(int32_t id, std::string piece, float score, TokenKind kind);
  int32_t add(std::string piece, float score, TokenKind kind);

  int32_t find(std::string_view piece) const;  // -1 when absent
  int32_t size() const { return static_cast<int32_t>(pieces_.size()); }
  bool contains(int32_t id) const { return id >= 0 && id < size(); }
  const std::string& piece(int32_t id) const { return pieces_[id]; }
  float score(int32_t id) const { return scores_[id]; }
  TokenKind kind(int32_t id) const { return kinds_[id]; }
  void set_kind(int32_t id, TokenKind kind) { kinds_[id] = kind; }

 private:
  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::vector<TokenKind> kinds_;
  StringIndex ids_{&pieces_};
};

}  // namespace cairn::tok
