// Open-addressing hash indexes for the hot lookups of encoding: piece → id
// (keys live in a caller's vector of strings, the index holds only hash and id)
// and (left id, right id) → merge. Linear probing, at most half full.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::tok {

class StringIndex {
 public:
  // keys[id] is the string of id; the vector must outlive the index.
  explicit StringIndex(const std::vector<std::string>* keys) : keys_(keys) { slots_.resize(16); }
  // Adds id under keys[id] unless that string is already indexed (the first id wins).
  void insert(int32_t id);
  int32_t find(std::string_view key) const;  // -1 when absent

 private:
  struct Slot {
    uint32_t hash = 0;
    int32_t id = -1;
  };
  void grow();

  const std::vector<std::string>* keys_;
  std::vector<Slot> slots_;
  size_t n_used_ = 0;
};

class PairIndex {
 public:
  struct Value {
    int32_t rank = -1, id = -1;
  };
  void insert(int32_t left, int32_t right, Value value);  // the first insert of a pair wins
  const Value* find(int32_t left, int32_t right) const {
    if (slots_.empty()) return nullptr;
    const uint64_t key = pack(left, right);
    const size_t mask = slots_.size() - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.value.id < 0) return nullptr;
      if (s.key == key) return &s.value;
    }
  }

 private:
  struct Slot {
    uint64_t key = 0;
    Value value;
  };
  static uint64_t pack(int32_t l, int32_t r) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
  }
  static uint64_t mix(uint64_t k) { return (k * 0x9E3779B97F4A7C15ull) >> 20; }
  void grow();

  std::vector<Slot> slots_;
  size_t n_used_ = 0;
};

}  // namespace cairn::tok
