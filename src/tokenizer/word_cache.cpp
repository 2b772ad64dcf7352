#include "tokenizer/word_cache.h"

#include <xxhash.h>

#include <cstring>

namespace cairn::tok {

// The table starts small and doubles: a compact table stays in cache.
WordCache::WordCache(size_t max_entries) : max_entries_(max_entries) {
  slots_.resize(1024);
}

void WordCache::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (!s.used) continue;
    size_t i = s.hash & mask;
    while (slots_[i].used) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

const WordCache::Slot* WordCache::find(std::string_view word, uint32_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (!s.used) return &s;
    if (s.hash == hash && s.key_len == word.size() &&
        std::memcmp(keys_.data() + s.key_offset, word.data(), word.size()) == 0)
      return &s;
  }
}

bool WordCache::lookup(std::string_view word, std::vector<int32_t>& out) const {
  if (word.size() > kMaxWordBytes) return false;
  const auto hash = static_cast<uint32_t>(XXH3_64bits(word.data(), word.size()));
  std::lock_guard lock(mutex_);
  const Slot* s = find(word, hash);
  if (!s->used) return false;
  out.insert(out.end(), ids_.begin() + s->ids_offset, ids_.begin() + s->ids_offset + s->n_ids);
  return true;
}

void WordCache::clear() {
  slots_.assign(1024, Slot{});
  keys_.clear();
  ids_.clear();
  n_entries_ = 0;
}

void WordCache::insert(std::string_view word, const int32_t* ids, size_t n_ids) {
  if (word.size() > kMaxWordBytes || n_ids > UINT8_MAX) return;
  const auto hash = static_cast<uint32_t>(XXH3_64bits(word.data(), word.size()));
  std::lock_guard lock(mutex_);
  if (n_entries_ >= max_entries_ || keys_.size() + word.size() > UINT32_MAX ||
      ids_.size() + n_ids > UINT32_MAX)
    clear();
  if (2 * (n_entries_ + 1) > slots_.size()) grow();
  auto* s = const_cast<Slot*>(find(word, hash));
  if (s->used) return;  // another thread got there first
  *s = Slot{hash,
            static_cast<uint32_t>(keys_.size()),
            static_cast<uint32_t>(ids_.size()),
            static_cast<uint8_t>(word.size()),
            static_cast<uint8_t>(n_ids),
            true};
  keys_.insert(keys_.end(), word.begin(), word.end());
  ids_.insert(ids_.end(), ids, ids + n_ids);
  ++n_entries_;
}

}  // namespace cairn::tok
