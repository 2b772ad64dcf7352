// Sequences for prefix-cache tests: segments of hashed q/k/v streams (see
// kv_test_util.h) whose token ids name the stream, so equal ids mean equal K/V.
#pragma once

#include <cstdint>
#include <vector>

#include "../kv/kv_test_util.h"
#include "prefix/prefix_cache.h"

namespace cairn {

// Reaches into a cache to break what its entries store.
struct PrefixCacheTestAccess {
  static void corrupt_tokens(PrefixCache& c, const PageKey& key) { ++c.entries_.at(key).tokens[0]; }
};

namespace test {

struct Seg {
  uint32_t stream = 0;
  int64_t n = 0;
};

inline std::vector<int32_t> token_ids(const std::vector<Seg>& segs) {
  std::vector<int32_t> ids;
  for (const Seg& s : segs)
    for (int64_t i = 0; i < s.n; ++i)
      ids.push_back(static_cast<int32_t>(s.stream * 100000 + ids.size()));
  return ids;
}

// Appends segs to empty slot, one step per segment; returns the token ids.
inline std::vector<int32_t> compute(PagedKvState& kv, const ModelConfig& c, int32_t slot,
                                    const std::vector<Seg>& segs) {
  int64_t pos = 0;
  for (const Seg& s : segs) {
    run_step(kv, c, {{slot, pos, s.n, s.stream}});
    pos += s.n;
  }
  return token_ids(segs);
}

inline PageKey test_ns() {
  return namespace_key("model-a", "f32");
}

// Computes segs in slot, publishes them and frees the slot.
inline void publish_sequence(PrefixCache& cache, PagedKvState& kv, const ModelConfig& c,
                             int32_t slot, const std::vector<Seg>& segs) {
  const std::vector<int32_t> ids = compute(kv, c, slot, segs);
  PublishCursor cur;
  cache.publish(slot, ids, test_ns(), cur);
  kv.free_sequence(slot);
}

}  // namespace test
}  // namespace cairn
