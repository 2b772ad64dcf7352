#include "tokenizer/vocab.h"

namespace cairn::tok {

void Vocab::resize(size_t n_tokens) {
  pieces_.resize(n_tokens);
  scores_.resize(n_tokens, 0.0f);
  kinds_.resize(n_tokens, TokenKind::kUnused);
}

void Vocab::set(int32_t id, std::string piece, float score, TokenKind kind) {
  if (static_cast<size_t>(id) >= pieces_.size()) resize(static_cast<size_t>(id) + 1);
  pieces_[id] = std::move(piece);
  ids_.insert(id);
  scores_[id] = score;
  kinds_[id] = kind;
}

int32_t Vocab::add(std::string piece, float score, TokenKind kind) {
  const int32_t id = size();
  set(id, std::move(piece), score, kind);
  return id;
}

int32_t Vocab::find(std::string_view piece) const {
  return ids_.find(piece);
}

}  // namespace cairn::tok
