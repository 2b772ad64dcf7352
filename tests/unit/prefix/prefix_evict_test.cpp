// Eviction: least recently used leaves first, never a page in use, under the
// byte cap and on demand for pool room.
#include <gtest/gtest.h>

#include "prefix/prefix_cache.h"
#include "prefix_test_util.h"

namespace cairn::test {
namespace {

int64_t matched(const PrefixCache& cache, const std::vector<Seg>& segs) {
  return cache.match(token_ids(segs), test_ns(), 1 << 20).n_tokens;
}

TEST(PrefixEvict, LeastRecentlyUsedLeavesFirst) {
  ModelConfig c = tiny_config({0});
  PagedKvState kv(c, f32_options(16));
  PrefixCache cache(kv, 1 << 22);
  const std::vector<Seg> a = {{1, 32}}, b = {{1, 16}, {2, 16}}, d = {{3, 16}};
  publish_sequence(cache, kv, c, 0, a);  // a0, a1
  publish_sequence(cache, kv, c, 0, b);  // touches a0; b1 under a0
  publish_sequence(cache, kv, c, 0, d);
  ASSERT_EQ(cache.stats().n_entries, 4);
  // a1 is oldest; then b1 (a0 is older but b1's parent); then a0; then d0.
  const auto evict_one = [&] { ASSERT_TRUE(cache.evict_until_free(kv.pool().free_bytes() + 1)); };
  evict_one();
  EXPECT_EQ(matched(cache, a), 16);
  EXPECT_EQ(matched(cache, b), 32);
  evict_one();
  EXPECT_EQ(matched(cache, b), 16);
  EXPECT_EQ(matched(cache, d), 16);
  evict_one();
  EXPECT_EQ(matched(cache, a), 0);
  EXPECT_EQ(matched(cache, d), 16);
  evict_one();
  EXPECT_EQ(cache.stats().n_entries, 0);
  EXPECT_EQ(cache.stats().evictions, 4);
  EXPECT_EQ(kv.pool().used_bytes(), 0);
}

TEST(PrefixEvict, AttachMakesEntriesRecent) {
  ModelConfig c = tiny_config({0});
  PagedKvState kv(c, f32_options(16));
  PrefixCache cache(kv, 1 << 22);
  publish_sequence(cache, kv, c, 0, {{1, 16}});
  publish_sequence(cache, kv, c, 0, {{2, 16}});
  cache.attach(0, cache.match(token_ids({{1, 16}}), test_ns(), 16));
  kv.free_sequence(0);
  ASSERT_TRUE(cache.evict_until_free(kv.pool().free_bytes() + 1));
  EXPECT_EQ(matched(cache, {{1, 16}}), 16);
  EXPECT_EQ(matched(cache, {{2, 16}}), 0);
}

TEST(PrefixEvict, PagesInUseStay) {
  ModelConfig c = tiny_config({0, 0});
  PagedKvState kv(c, f32_options(16));
  PrefixCache cache(kv, 1 << 22);
  const std::vector<int32_t> ids = compute(kv, c, 0, {{4, 40}});
  PublishCursor cur;
  cache.publish(0, ids, test_ns(), cur);
  publish_sequence(cache, kv, c, 1, {{5, 16}});
  cache.attach(2, cache.match(token_ids({{1, 64}}), test_ns(), 64));  // nothing: a miss
  EXPECT_EQ(cache.stats().evictable_bytes, kv.pool().page_bytes(kv.arena_of(0, 0)));
  EXPECT_FALSE(cache.evict_until_free(kv.pool().budget_bytes()));
  EXPECT_EQ(cache.stats().n_entries, 2);
  EXPECT_EQ(cache.stats().evictable_bytes, 0);
  EXPECT_EQ(matched(cache, {{4, 40}}), 32);
  kv.free_sequence(0);
  EXPECT_FALSE(cache.evict_until_free(kv.pool().budget_bytes() + 1));
  EXPECT_EQ(cache.stats().n_entries, 0);
}

TEST(PrefixEvict, ByteCapHolds) {
  ModelConfig c = tiny_config({0});
  PagedKvState kv(c, f32_options(16));
  const int64_t page = kv.pool().page_bytes(0);
  PrefixCache cache(kv, 3 * page + page / 2);
  for (uint32_t s = 1; s <= 5; ++s) {
    publish_sequence(cache, kv, c, 0, {{s, 16}});
    EXPECT_LE(cache.stats().bytes, 3 * page);
  }
  EXPECT_EQ(cache.stats().n_entries, 3);
  EXPECT_EQ(cache.stats().evictions, 2);
  EXPECT_EQ(matched(cache, {{2, 16}}), 0);
  EXPECT_EQ(matched(cache, {{3, 16}}), 16);
  // A sequence of 4 pages: the three old entries go, three of its pages fit.
  const std::vector<int32_t> nine = compute(kv, c, 1, {{9, 64}});
  PublishCursor cur;
  cache.publish(1, nine, test_ns(), cur);
  EXPECT_EQ(cur.n_pages, 4);
  EXPECT_EQ(cache.stats().bytes, 3 * page);
  EXPECT_EQ(matched(cache, {{9, 64}}), 48);
  EXPECT_EQ(matched(cache, {{5, 16}}), 0);
  // Everything cached is in use now: nothing more goes in.
  const std::vector<int32_t> ten = compute(kv, c, 2, {{10, 16}});
  PublishCursor c2;
  cache.publish(2, ten, test_ns(), c2);
  EXPECT_EQ(c2.n_pages, 1);
  EXPECT_EQ(matched(cache, {{10, 16}}), 0);
  EXPECT_EQ(cache.stats().n_entries, 3);
}

TEST(PrefixEvict, UntilThePoolHasRoom) {
  ModelConfig c = tiny_config({0});
  PagedKvOptions o = f32_options(16);
  const int64_t page = PagedKvState(c, o).pool().page_bytes(0);
  o.budget_bytes = 10 * page;
  PagedKvState kv(c, o);
  PrefixCache cache(kv, 1 << 22);
  for (uint32_t s = 1; s <= 6; ++s) publish_sequence(cache, kv, c, 0, {{s, 16}});
  compute(kv, c, 1, {{9, 48}});
  EXPECT_EQ(kv.pool().free_bytes(), page);
  EXPECT_FALSE(kv.can_append(1, 64));
  EXPECT_TRUE(cache.evict_until_free(4 * page));
  EXPECT_EQ(kv.pool().free_bytes(), 4 * page);
  EXPECT_EQ(cache.stats().evictions, 3);
  EXPECT_EQ(matched(cache, {{3, 16}}), 0);
  EXPECT_EQ(matched(cache, {{4, 16}}), 16);
  EXPECT_TRUE(kv.can_append(1, 64));
  EXPECT_FALSE(cache.evict_until_free(8 * page));
  EXPECT_EQ(cache.stats().n_entries, 0);
  EXPECT_EQ(kv.n_tokens(1), 48);
}

}  // namespace
}  // namespace cairn::test
