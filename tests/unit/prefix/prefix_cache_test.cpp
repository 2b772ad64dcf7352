// Publish, match and attach: sharing by reference, bit-identical continuation
// (full precision, quantized, sliding windows) and verification of hits.
#include <gtest/gtest.h>

#include "prefix/prefix_cache.h"
#include "prefix_test_util.h"

namespace cairn::test {
namespace {

TEST(PrefixCache, SharesPagesByReference) {
  ModelConfig c = tiny_config({0, 0});
  PagedKvState kv(c, f32_options(16));
  PrefixCache cache(kv, 1 << 20);
  const std::vector<int32_t> ids = compute(kv, c, 0, {{1, 70}});
  PublishCursor cur;
  cache.publish(0, ids, test_ns(), cur);
  EXPECT_EQ(cur.n_pages, 4);
  const int64_t page = kv.pool().page_bytes(kv.arena_of(0, 0));
  EXPECT_EQ(cache.stats().n_entries, 4);
  EXPECT_EQ(cache.stats().bytes, 4 * page);
  EXPECT_EQ(cache.stats().evictable_bytes, 0);  // slot 0 uses every page
  cache.publish(0, ids, test_ns(), cur);        // nothing new past the cursor
  EXPECT_EQ(cache.stats().n_entries, 4);

  EXPECT_EQ(cache.match(ids, test_ns(), 63).n_tokens, 48);
  EXPECT_EQ(cache.match(ids, namespace_key("model-b", "f32"), 70).n_tokens, 0);
  const PrefixMatch m = cache.match(ids, test_ns(), 70);
  ASSERT_EQ(m.n_tokens, 64);
  EXPECT_EQ(m.cursor().n_pages, 4);
  EXPECT_EQ(m.cursor().last, cur.last);
  cache.attach(1, m);
  cache.attach(2, m);
  const std::vector<int32_t> pages = kv.page_ids(0, 0);
  const int32_t arena = kv.arena_of(0, 0);
  for (int32_t slot : {1, 2}) {
    EXPECT_EQ(kv.n_tokens(slot), 64);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(kv.page_ids(slot, 0)[i], pages[i]);
  }
  kv.free_sequence(0);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(kv.pool().ref_count(arena, pages[i]), 3);  // cache + 2

  // Slot 1 goes on and publishes from the match's cursor: only its new page.
  const std::vector<int32_t> longer = token_ids({{1, 64}, {2, 20}});
  run_step(kv, c, {{1, 64, 20, 2}});
  PublishCursor c1 = m.cursor();
  cache.publish(1, longer, test_ns(), c1);
  EXPECT_EQ(c1.n_pages, 5);
  EXPECT_EQ(cache.stats().n_entries, 5);

  kv.free_sequence(1);
  kv.free_sequence(2);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(kv.pool().ref_count(arena, pages[i]), 1);
  EXPECT_EQ(kv.pool().used_bytes(), cache.stats().bytes);
  EXPECT_EQ(cache.stats().evictable_bytes, cache.stats().bytes);
  cache.clear();
  EXPECT_EQ(kv.pool().used_bytes(), 0);
  EXPECT_EQ(cache.match(ids, test_ns(), 70).n_tokens, 0);
}

TEST(PrefixCache, ZeroBytesTurnsItOff) {
  ModelConfig c = tiny_config({0});
  PagedKvState kv(c, f32_options(16));
  PrefixCache cache(kv, 0);
  const std::vector<int32_t> ids = compute(kv, c, 0, {{1, 40}});
  PublishCursor cur;
  cache.publish(0, ids, test_ns(), cur);
  EXPECT_EQ(cur.n_pages, 2);
  EXPECT_EQ(cache.stats().n_entries, 0);
  EXPECT_EQ(cache.match(ids, test_ns(), 40).n_tokens, 0);
}

// Slot `slot` of kv continues like a fresh state that computed `prefix` (in the
// given steps): the same outputs, bit for bit, for a chunk and two decodes.
void expect_continues(PagedKvState& kv, const ModelConfig& c, const PagedKvOptions& o, int32_t slot,
                      const std::vector<Seg>& prefix, uint32_t stream) {
  PagedKvState ref(c, o);
  compute(ref, c, 0, prefix);
  const int64_t n = kv.n_tokens(slot);
  ASSERT_EQ(ref.n_tokens(0), n);
  ASSERT_EQ(kv.is_quantized(slot), ref.is_quantized(0));
  ASSERT_EQ(kv.min_reusable_tokens(slot), ref.min_reusable_tokens(0));
  const std::vector<SpanSpec> steps = {{0, n, 9, stream}, {0, n + 9, 1, stream}, {0, n + 10, 1, 3}};
  for (SpanSpec st : steps) {
    const StepOut want = run_step(ref, c, {st});
    st.slot = slot;
    ASSERT_TRUE(bit_equal(run_step(kv, c, {st}), want)) << "at " << st.begin;
  }
  EXPECT_EQ(kv.is_quantized(slot), ref.is_quantized(0));
}

TEST(PrefixCache, AttachContinuesLikeComputingF32) {
  ModelConfig c = tiny_config({0, 0});
  const PagedKvOptions o = f32_options(16);
  PagedKvState kv(c, o);
  PrefixCache cache(kv, 1 << 20);
  const std::vector<int32_t> ids = compute(kv, c, 0, {{1, 24}, {1, 16}});
  PublishCursor cur;
  cache.publish(0, ids, test_ns(), cur);
  const PrefixMatch m = cache.match(token_ids({{1, 64}}), test_ns(), 63);
  ASSERT_EQ(m.n_tokens, 32);
  cache.attach(1, m);
  expect_continues(kv, c, o, 1, {{1, 32}}, 1);
  expect_continues(kv, c, o, 0, {{1, 24}, {1, 16}}, 1);  // the source is untouched
}

// Pages published before a sequence converted stay full precision; those after
// are quantized. A chain holds one format, and quantized pages start a sequence
// only at or past the length their sequence converted at.
TEST(PrefixCache, AttachContinuesLikeComputingQuantized) {
  ModelConfig c = tiny_config({0, 0});
  PagedKvOptions o = f32_options(16);
  o.quant = uniform_scheme(c, 8, 32, 24);
  PagedKvState kv(c, o);
  PrefixCache cache(kv, 1 << 22);
  PublishCursor c0;
  run_step(kv, c, {{0, 0, 20, 1}});
  cache.publish(0, token_ids({{1, 20}}), test_ns(), c0);
  run_step(kv, c, {{0, 20, 20, 1}});  // converts at 40
  cache.publish(0, token_ids({{1, 40}}), test_ns(), c0);
  EXPECT_EQ(cache.stats().n_entries, 2);
  PrefixMatch m = cache.match(token_ids({{1, 64}}), test_ns(), 63);
  ASSERT_EQ(m.n_tokens, 16);  // page 0 full precision, page 1 quantized
  cache.attach(1, m);
  EXPECT_FALSE(kv.is_quantized(1));
  expect_continues(kv, c, o, 1, {{1, 16}}, 1);  // and crosses 24 like the reference

  const std::vector<int32_t> five = compute(kv, c, 2, {{5, 40}});  // converts at 40
  PublishCursor c2;
  cache.publish(2, five, test_ns(), c2);
  EXPECT_EQ(cache.match(token_ids({{5, 96}}), test_ns(), 95).n_tokens, 0);  // 32 < 40
  run_step(kv, c, {{2, 40, 40, 5}});
  cache.publish(2, token_ids({{5, 80}}), test_ns(), c2);
  EXPECT_EQ(cache.match(token_ids({{5, 96}}), test_ns(), 47).n_tokens, 0);
  EXPECT_EQ(cache.match(token_ids({{5, 96}}), test_ns(), 48).n_tokens, 48);
  m = cache.match(token_ids({{5, 96}}), test_ns(), 95);
  ASSERT_EQ(m.n_tokens, 80);
  cache.attach(3, m);
  EXPECT_TRUE(kv.is_quantized(3));
  EXPECT_EQ(kv.min_reusable_tokens(3), 40);
  expect_continues(kv, c, o, 3, {{5, 40}, {5, 40}}, 5);
}

// Windows {0, 48}, 16-token pages: a query at n sees keys from n - 47, so the
// sliding pages covering [n - 47, n) must be cached; earlier ones may be gone.
TEST(PrefixCache, AttachContinuesLikeComputingSliding) {
  ModelConfig c = tiny_config({0, 48});
  const PagedKvOptions o = f32_options(16);
  PagedKvState kv(c, o);
  PrefixCache cache(kv, 1 << 22);
  PublishCursor c1, c2;
  run_step(kv, c, {{0, 0, 60, 1}});
  cache.publish(0, token_ids({{1, 60}}), test_ns(), c1);  // pages 0..2 all live
  run_step(kv, c, {{0, 60, 40, 1}});
  cache.publish(0, token_ids({{1, 100}}), test_ns(), c1);
  const std::vector<int32_t> two = compute(kv, c, 1, {{2, 100}});
  EXPECT_EQ(kv.page_ids(1, 1)[2], -1);  // released before it was published
  cache.publish(1, two, test_ns(), c2);
  kv.free_sequence(0);
  kv.free_sequence(1);

  EXPECT_EQ(cache.match(token_ids({{1, 128}}), test_ns(), 60).n_tokens, 48);
  EXPECT_EQ(cache.match(token_ids({{2, 128}}), test_ns(), 60).n_tokens, 0);
  EXPECT_EQ(cache.match(token_ids({{2, 128}}), test_ns(), 70).n_tokens, 0);  // 64 needs 1..3
  PrefixMatch m = cache.match(token_ids({{2, 128}}), test_ns(), 99);
  ASSERT_EQ(m.n_tokens, 96);
  cache.attach(2, m);
  EXPECT_EQ(kv.page_ids(2, 1)[0], -1);
  expect_continues(kv, c, o, 2, {{2, 96}}, 2);
  m = cache.match(token_ids({{1, 128}}), test_ns(), 99);
  ASSERT_EQ(m.n_tokens, 96);
  cache.attach(3, m);
  expect_continues(kv, c, o, 3, {{1, 96}}, 1);
}

// The bytes a step over attached and computing sequences takes, as planned.
TEST(PrefixCache, BytesToAppendAfterAttach) {
  ModelConfig c = tiny_config({0, 0});
  for (int64_t quant_start : {-1, 48}) {
    PagedKvOptions o = f32_options(16);
    if (quant_start >= 0) o.quant = uniform_scheme(c, 8, 32, quant_start);
    PagedKvState kv(c, o);
    PrefixCache cache(kv, 1 << 22);
    const std::vector<int32_t> ids = compute(kv, c, 0, {{1, 40}});
    PublishCursor cur;
    cache.publish(0, ids, test_ns(), cur);
    const PrefixMatch m = cache.match(ids, test_ns(), 40);
    ASSERT_EQ(m.n_tokens, 32);
    cache.attach(1, m);
    cache.attach(2, m);
    const std::vector<SpanSpec> step = {{0, 40, 5, 1}, {1, 32, 20, 2}, {2, 32, 3, 3}};
    int64_t predicted = 0;
    for (const SpanSpec& sp : step) predicted += kv.bytes_to_append(sp.slot, sp.n);
    const int64_t before = kv.pool().used_bytes();
    run_step(kv, c, step);
    if (quant_start < 0) {
      EXPECT_EQ(kv.pool().used_bytes() - before, predicted);
    } else {  // slot 1 reaches 48 and converts: its two new full pages are freed again
      ASSERT_TRUE(kv.is_quantized(1));
      ASSERT_FALSE(kv.is_quantized(2));
      const int64_t full_page = kv.pool().page_bytes(kv.arena_of(2, 0));
      EXPECT_EQ(kv.pool().used_bytes() - before, predicted - 2 * full_page);
    }
  }
}

// A key hit whose stored tokens differ is a miss: the match stops there.
TEST(PrefixCache, VerifiesStoredTokens) {
  ModelConfig c = tiny_config({0});
  PagedKvState kv(c, f32_options(16));
  PrefixCache cache(kv, 1 << 20);
  const std::vector<int32_t> ids = compute(kv, c, 0, {{1, 64}});
  PublishCursor cur;
  cache.publish(0, ids, test_ns(), cur);
  const PrefixMatch m = cache.match(ids, test_ns(), 64);
  ASSERT_EQ(m.n_tokens, 64);
  std::vector<int32_t> other = ids;
  other[20] = 7;
  EXPECT_EQ(cache.match(other, test_ns(), 64).n_tokens, 16);
  PrefixCacheTestAccess::corrupt_tokens(cache, m.chain[2]);
  EXPECT_EQ(cache.match(ids, test_ns(), 64).n_tokens, 32);
  PrefixCacheTestAccess::corrupt_tokens(cache, m.chain[0]);
  EXPECT_EQ(cache.match(ids, test_ns(), 64).n_tokens, 0);
}

}  // namespace
}  // namespace cairn::test
