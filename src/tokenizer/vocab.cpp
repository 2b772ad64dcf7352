#include "tokenizer/vocab.h"

namespace cairn::tok {

void Vocab::resize(size_t n_tokens) {
  pieces_.resize(n_tokens);
  scores_.resize(n_tokens, 0.0f);
  kinds_.resize(n_tokens, TokenKind::kUnused);
}

void Vocab::set(int32_t id, std::string piece, float score, TokenKind kind) {
  if (static_cast<size_t>(id) >= pieces_.size()) resize(static_cast<size_t>(id) + 1);
  ids_.try_emplace(piece, id);
  pieces_[id] = std::move(piece);
  scores_[id] = score;
  kinds_[id] = kind;
}

int32_t Vocab::add(std::string piece, float score, TokenKind kind) {
  const int32_t id = size();
  set(id, std::move(piece), score, kind);
  return id;
}

int32_t Vocab::find(std::string_view piece) const {
  auto it = ids_.find(piece);
  return it == ids_.end() ? -1 : it->second;
}

}  // namespace cairn::tok
