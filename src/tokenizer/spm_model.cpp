#include "tokenizer/spm_model.h"

#include <fmt/format.h>

#include <queue>

#include "tokenizer/utf8.h"

namespace cairn::tok {
namespace {

struct Symbol {
  int prev, next;
  uint32_t begin, len;  // bytes of the word; len 0 once merged away
};

struct Bigram {
  int left, right;
  float score;
  uint32_t len;  // combined length when queued: a stale entry no longer matches
  int32_t id;
  bool operator<(const Bigram& o) const {  // max-heap: highest score, then leftmost
    return score < o.score || (score == o.score && left > o.left);
  }
};

}  // namespace

SpmModel::SpmModel(const Vocab* vocab, int32_t unk_id) : vocab_(vocab), unk_id_(unk_id) {
  for (int b = 0; b < 256; ++b) {
    int32_t id = vocab_->find(fmt::format("<0x{:02X}>", b));
    if (id < 0) id = vocab_->find(std::string(1, static_cast<char>(b)));
    byte_ids_[b] = id;
  }
}

void SpmModel::emit_bytes(std::string_view text, std::vector<int32_t>& out) const {
  for (char c : text) {
    const int32_t id = byte_ids_[static_cast<unsigned char>(c)];
    out.push_back(id >= 0 ? id : unk_id_);
  }
}

void SpmModel::encode(std::string_view word, std::vector<int32_t>& out) const {
  std::vector<Symbol> symbols;
  for (size_t pos = 0; pos < word.size();) {
    const size_t len = std::min(utf8_char_len(static_cast<uint8_t>(word[pos])), word.size() - pos);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back(
        {index - 1, index + 1, static_cast<uint32_t>(pos), static_cast<uint32_t>(len)});
    pos += len;
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;
  std::priority_queue<Bigram> queue;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const uint32_t len = symbols[left].len + symbols[right].len;
    const int32_t id = vocab_->find(word.substr(symbols[left].begin, len));
    if (id >= 0) queue.push({left, right, vocab_->score(id), len, id});
  };
  for (size_t i = 1; i < symbols.size(); ++i) try_add(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = symbols[b.left];
    Symbol& r = symbols[b.right];
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.len || l.next != b.right) continue;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  for (int i = 0; i >= 0; i = symbols[i].next) {
    const std::string_view text = word.substr(symbols[i].begin, symbols[i].len);
    const int32_t id = vocab_->find(text);
    if (id >= 0) {
      out.push_back(id);
    } else {
      emit_bytes(text, out);
    }
  }
}

}  // namespace cairn::tok
