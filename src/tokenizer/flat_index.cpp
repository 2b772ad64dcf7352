#include "tokenizer/flat_index.h"

#include <xxhash.h>

namespace cairn::tok {
namespace {

uint32_t hash_of(std::string_view s) {
  return static_cast<uint32_t>(XXH3_64bits(s.data(), s.size()));
}

}  // namespace

void StringIndex::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.id < 0) continue;
    size_t i = s.hash & mask;
    while (slots_[i].id >= 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

void StringIndex::insert(int32_t id) {
  if (2 * (n_used_ + 1) > slots_.size()) grow();
  const std::string& key = (*keys_)[id];
  const uint32_t hash = hash_of(key);
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.id < 0) {
      s = {hash, id};
      ++n_used_;
      return;
    }
    if (s.hash == hash && (*keys_)[s.id] == key) return;
  }
}

int32_t StringIndex::find(std::string_view key) const {
  const uint32_t hash = hash_of(key);
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id < 0) return -1;
    if (s.hash == hash && (*keys_)[s.id] == key) return s.id;
  }
}

void PairIndex::grow() {
  std::vector<Slot> old(slots_.empty() ? 16 : slots_.size() * 2);
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.value.id < 0) continue;
    size_t i = mix(s.key) & mask;
    while (slots_[i].value.id >= 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

void PairIndex::insert(int32_t left, int32_t right, Value value) {
  if (2 * (n_used_ + 1) > slots_.size()) grow();
  const uint64_t key = pack(left, right);
  const size_t mask = slots_.size() - 1;
  for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.value.id < 0) {
      s = {key, value};
      ++n_used_;
      return;
    }
    if (s.key == key) return;
  }
}

}  // namespace cairn::tok
