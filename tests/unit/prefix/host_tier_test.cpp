// The host-RAM tier: records of evicted pages kept in its own memory, chains
// matched against the stored ids and taken out whole, the oldest passed on
// over the cap, and its memory carved from chunks and reused.
#include "prefix/host_tier.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "prefix/page_key.h"
#include "prefix_test_util.h"

namespace cairn::test {
namespace {

HostTier::Allocate counting_allocator(int* calls) {
  return [calls](size_t n) {
    ++*calls;
    return allocate_host(n);
  };
}

// A one-group record of n bytes, all `fill`, owned by itself.
PageRecord record(uint64_t id, size_t n, uint8_t fill) {
  std::vector<uint8_t> bytes(n, fill);
  PageRecord r;
  r.key = PageKey{id, id + 1};
  r.tokens = {static_cast<int32_t>(id)};
  r.groups.push_back({0, bytes});
  r.own();
  return r;
}

TEST(HostTier, ChainsAreMatchedVerifiedAndTakenOutWhole) {
  ModelConfig c = tiny_config({0});
  PagedKvState kv(c, f32_options(16));
  PrefixCache cache(kv, 1 << 22);
  int calls = 0;
  HostTier host(1 << 22, counting_allocator(&calls));
  std::map<uint64_t, std::vector<uint8_t>> bytes;  // by key.lo, as evicted
  cache.set_evict_observer([&](const PageKey& ns, const PageRecord& r) {
    bytes[r.key.lo].assign(r.groups[0].bytes.begin(), r.groups[0].bytes.end());
    host.put(ns, r);
  });
  publish_sequence(cache, kv, c, 0, {{1, 32}});
  const std::vector<int32_t> ids = token_ids({{1, 32}});
  const PrefixMatch m = cache.match(ids, test_ns(), 1 << 20);
  ASSERT_EQ(m.chain.size(), 2u);
  cache.evict_all();  // into the host tier (bytes copied: the pool pages are freed)
  EXPECT_EQ(host.stats().pages, 2);
  EXPECT_EQ(host.match_chain(test_ns(), {}, ids, 16, 10), m.chain);
  EXPECT_EQ(host.match_chain(test_ns(), {}, ids, 16, 1).size(), 1u);
  EXPECT_TRUE(host.match_chain(namespace_key("model-b", "f32"), {}, ids, 16, 10).empty());
  std::vector<int32_t> other = ids;
  other[20] += 1;  // the second page's ids differ
  EXPECT_EQ(host.match_chain(test_ns(), {}, other, 16, 10).size(), 1u);
  std::optional<PageRecord> first = host.take(m.chain[0]), second = host.take(m.chain[1]);
  ASSERT_TRUE(first && second);
  EXPECT_FALSE(host.take(m.chain[0]));
  EXPECT_TRUE(host.match_chain(test_ns(), {}, ids, 16, 10).empty());
  EXPECT_EQ(host.stats().pages, 0);
  EXPECT_EQ(host.stats().taken, 2);
  ASSERT_TRUE(cache.insert_restored(test_ns(), *first));
  ASSERT_TRUE(cache.insert_restored(test_ns(), *second));
  EXPECT_EQ(cache.match(ids, test_ns(), 1 << 20).n_tokens, 32);
  for (const PageRecord* r : {&*first, &*second}) {
    const std::vector<uint8_t>& want = bytes.at(r->key.lo);
    ASSERT_EQ(r->groups[0].bytes.size(), want.size());
    EXPECT_EQ(std::memcmp(r->groups[0].bytes.data(), want.data(), want.size()), 0);
  }
  cache.set_evict_observer({});
}

TEST(HostTier, OverItsCapTheOldestGoOnThroughTheObserver) {
  int calls = 0;
  HostTier host(2000, counting_allocator(&calls));
  std::vector<int32_t> passed;  // the records' ids
  host.set_evict_observer([&](const PageKey&, const PageRecord& r) {
    passed.push_back(r.tokens[0]);
    EXPECT_EQ(r.groups[0].bytes[0], static_cast<uint8_t>(r.tokens[0]));  // still live
  });
  for (uint64_t i = 1; i <= 3; ++i) host.adopt(test_ns(), record(i, 1000, static_cast<uint8_t>(i)));
  EXPECT_EQ(passed, std::vector<int32_t>{1});
  ASSERT_TRUE(host.take(record(2, 1, 0).key));  // taking refreshes nothing: 3 is now the oldest
  host.put(test_ns(), record(4, 1000, 4));
  host.put(test_ns(), record(5, 1000, 5));
  EXPECT_EQ(passed, (std::vector<int32_t>{1, 3}));
  host.put(test_ns(), record(6, 3000, 6));  // larger than the cap: passed on at once
  EXPECT_EQ(passed, (std::vector<int32_t>{1, 3, 6}));
  const HostTierStats s = host.stats();
  EXPECT_EQ(s.pages, 2);
  EXPECT_EQ(s.bytes, 2000);
  EXPECT_EQ(s.evictions, 3);
  host.evict_all();
  EXPECT_EQ(passed, (std::vector<int32_t>{1, 3, 6, 4, 5}));
  EXPECT_EQ(host.stats().bytes, 0);
}

TEST(HostTier, MemoryIsCarvedFromChunksAndReused) {
  int calls = 0;
  HostTier host(1 << 20, counting_allocator(&calls));
  uint8_t* first = nullptr;
  {
    std::shared_ptr<uint8_t> a = host.buffer(1000), b = host.buffer(1000);
    first = a.get();
    EXPECT_EQ(b.get(), a.get() + 1024);  // slots of 1000 rounded up to 64
    std::memset(a.get(), 1, 1000);
    std::memset(b.get(), 2, 1000);
  }
  EXPECT_EQ(host.buffer(1000).get(), first);  // released slots come back
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(host.stats().memory_bytes, int64_t{32} << 20);
  std::shared_ptr<uint8_t> big = host.buffer(size_t{40} << 20);  // a chunk of its own size
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(host.stats().memory_bytes, (int64_t{32} << 20) + (int64_t{40} << 20));
  // A buffer outlives its tier.
  std::shared_ptr<uint8_t> kept;
  {
    HostTier other(1 << 20, counting_allocator(&calls));
    kept = other.buffer(64);
  }
  std::memset(kept.get(), 3, 64);
}

}  // namespace
}  // namespace cairn::test
