// A per-tokenizer cache from a pre-tokenized word to its ids: open addressing
// over flat arrays (word bytes and ids live in two arenas), so a hit costs one
// hash and usually one probe. Thread-safe behind a mutex; cleared when full.
#pragma once

#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace cairn::tok {

class WordCache {
 public:
  static constexpr size_t kMaxWordBytes = 64;

  explicit WordCache(size_t max_entries = 1 << 17);
  // Appends the cached ids of word to out; false on a miss (out untouched).
  bool lookup(std::string_view word, std::vector<int32_t>& out) const;
  void insert(std::string_view word, const int32_t* ids, size_t n_ids);

 private:
  struct Slot {  // 16 bytes
    uint32_t hash = 0;
    uint32_t key_offset = 0, ids_offset = 0;
    uint8_t key_len = 0, n_ids = 0;
    bool used = false;
  };
  const Slot* find(std::string_view word, uint32_t hash) const;  // caller holds mutex_
  void clear();
  void grow();

  size_t max_entries_;
  size_t n_entries_ = 0;
  std::vector<Slot> slots_;  // power-of-two size, at most half full
  std::vector<char> keys_;
  std::vector<int32_t> ids_;
  mutable std::mutex mutex_;
};

}  // namespace cairn::tok
