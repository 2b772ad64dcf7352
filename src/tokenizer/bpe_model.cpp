#include "tokenizer/bpe_model.h"

#include <fmt/format.h>

#include <queue>

#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace cairn::tok {

BpeModel::BpeModel(const Vocab* vocab, BpeOptions options)
    : vocab_(vocab), options_(std::move(options)) {
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    byte_ids_[b] = options_.byte_level ? vocab_->find(byte_level_char(byte))
                                       : vocab_->find(fmt::format("<0x{:02X}>", b));
  }
  if (options_.byte_level && options_.ignore_merges) {
    raw_pieces_.resize(vocab_->size());
    for (int32_t id = 0; id < vocab_->size(); ++id) {
      if (vocab_->kind(id) != TokenKind::kNormal) continue;
      raw_pieces_[id] = byte_level_decode(vocab_->piece(id));
      raw_ids_.insert(id);
    }
  }
}

bool BpeModel::add_merge(std::string_view left, std::string_view right) {
  const int32_t rank = n_merges_++;
  const int32_t left_id = vocab_->find(left), right_id = vocab_->find(right);
  if (left_id < 0 || right_id < 0) return false;
  std::string merged(left);
  const std::string& prefix = options_.continuing_subword_prefix;
  if (!prefix.empty() && right.substr(0, prefix.size()) == prefix)
    right.remove_prefix(prefix.size());
  merged.append(right);
  const int32_t id = vocab_->find(merged);
  if (id < 0) return false;
  merges_.insert(left_id, right_id, {rank, id});
  return true;
}

int32_t BpeModel::whole_word_id(std::string_view word) const {
  if (options_.byte_level) {
    return raw_ids_.find(word);
  }
  return vocab_->find(word);
}

void BpeModel::initial_symbols(std::string_view word, std::vector<Symbol>& symbols) const {
  auto push = [&](int32_t id) {
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({id, index - 1, index + 1});
  };
  if (options_.byte_level) {
    for (char c : word) {
      const int32_t id = byte_ids_[static_cast<uint8_t>(c)];
      if (id >= 0) push(id);
    }
    return;
  }
  bool previous_unknown = false;
  std::string piece;
  for (size_t pos = 0; pos < word.size();) {
    const size_t len = std::min(utf8_char_len(static_cast<uint8_t>(word[pos])), word.size() - pos);
    piece.assign(pos > 0 ? options_.continuing_subword_prefix : std::string());
    piece.append(word.substr(pos, len));
    if (pos + len == word.size()) piece.append(options_.end_of_word_suffix);
    const int32_t id = vocab_->find(piece);
    bool unknown = false;
    if (id >= 0) {
      push(id);
    } else if (options_.byte_fallback) {
      bool all = true;
      for (size_t i = pos; i < pos + len; ++i) all &= byte_ids_[static_cast<uint8_t>(word[i])] >= 0;
      for (size_t i = pos; all && i < pos + len; ++i)
        push(byte_ids_[static_cast<uint8_t>(word[i])]);
      unknown = !all;
    } else {
      unknown = true;
    }
    if (unknown && options_.unk_id >= 0 && !(options_.fuse_unk && previous_unknown))
      push(options_.unk_id);
    previous_unknown = unknown;
    pos += len;
  }
}

void BpeModel::merge(std::vector<Symbol>& symbols) const {
  struct Candidate {
    int32_t rank;
    int left;
    int32_t left_id, right_id, result;
    bool operator<(const Candidate& o) const {  // min-heap on (rank, left)
      return rank > o.rank || (rank == o.rank && left > o.left);
    }
  };
  std::priority_queue<Candidate> queue;
  auto try_add = [&](int left) {
    if (left < 0) return;
    const int right = symbols[left].next;
    if (right < 0) return;
    const PairIndex::Value* m = merges_.find(symbols[left].id, symbols[right].id);
    if (m) queue.push({m->rank, left, symbols[left].id, symbols[right].id, m->id});
  };
  for (size_t i = 0; i + 1 < symbols.size(); ++i) try_add(static_cast<int>(i));
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& l = symbols[c.left];
    if (l.id != c.left_id || l.next < 0) continue;  // stale: the left symbol changed
    Symbol& r = symbols[l.next];
    if (r.id != c.right_id) continue;
    l.id = c.result;
    r.id = -1;  // merged away
    l.next = r.next;
    if (l.next >= 0) symbols[l.next].prev = c.left;
    try_add(l.prev);
    try_add(c.left);
  }
}

void BpeModel::encode(std::string_view word, std::vector<int32_t>& out) const {
  if (options_.ignore_merges ||
      (options_.whole_newline_runs && word.find_first_not_of('\n') == std::string_view::npos)) {
    const int32_t id = whole_word_id(word);
    if (id >= 0) {
      out.push_back(id);
      return;
    }
  }
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  initial_symbols(word, symbols);
  if (symbols.empty()) return;
  symbols.back().next = -1;
  merge(symbols);
  for (int i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

}  // namespace cairn::tok
