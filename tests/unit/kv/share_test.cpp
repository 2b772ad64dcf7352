// adopt (a slot taking pages another holder keeps) and bytes_to_append.
#include <gtest/gtest.h>

#include <functional>

#include "core/error.h"
#include "kv/paged_kv.h"
#include "kv_test_util.h"

namespace cairn::test {
namespace {

std::vector<std::vector<int32_t>> first_pages(const PagedKvState& s, int32_t slot, size_t n) {
  std::vector<std::vector<int32_t>> pages;
  for (size_t g = 0; g < s.groups().size(); ++g) {
    std::vector<int32_t> ids = s.page_ids(slot, static_cast<int>(g));
    ids.resize(n);
    pages.push_back(std::move(ids));
  }
  return pages;
}

TEST(Adopt, ContinuesLikeTheSlotThatComputed) {
  ModelConfig c = tiny_config({0, 0});
  PagedKvState s(c, f32_options(16)), ref(c, f32_options(16));
  run_step(s, c, {{0, 0, 40, 1}});
  s.adopt(1, first_pages(s, 0, 2), 32, false, 0);
  EXPECT_EQ(s.n_tokens(1), 32);
  ASSERT_EQ(s.groups().size(), 1u);  // both layers attend fully: one group
  for (int g = 0; g < 1; ++g)
    for (int32_t id : s.page_ids(1, g)) EXPECT_EQ(s.pool().ref_count(s.arena_of(1, g), id), 2);
  run_step(ref, c, {{0, 0, 32, 1}});
  ASSERT_TRUE(bit_equal(run_step(s, c, {{1, 32, 5, 7}}), run_step(ref, c, {{0, 32, 5, 7}})));
  ASSERT_TRUE(bit_equal(run_step(s, c, {{1, 37, 1, 7}}), run_step(ref, c, {{0, 37, 1, 7}})));
  s.free_sequence(0);
  s.free_sequence(1);
  EXPECT_EQ(s.pool().used_bytes(), 0);
}

TEST(Adopt, SlidingGroupTakesLeadingReleasedPages) {
  ModelConfig c = tiny_config({0, 48});
  PagedKvState s(c, f32_options(16)), ref(c, f32_options(16));
  run_step(s, c, {{0, 0, 100, 1}});  // the sliding group released pages 0..2
  auto pages = first_pages(s, 0, 6);
  EXPECT_EQ(pages[1][0], -1);
  s.adopt(1, pages, 96, false, 0);
  run_step(ref, c, {{0, 0, 96, 1}});
  ASSERT_TRUE(bit_equal(run_step(s, c, {{1, 96, 3, 2}}), run_step(ref, c, {{0, 96, 3, 2}})));
  // Position 96 sees keys from 49: page 3 must be there.
  pages[1][3] = -1;
  EXPECT_THROW(s.adopt(2, pages, 96, false, 0), Error);
  EXPECT_EQ(s.n_tokens(2), 0);
}

TEST(Adopt, RejectsWhatDoesNotFit) {
  ModelConfig c = tiny_config({0, 0});
  PagedKvState s(c, f32_options(16));
  run_step(s, c, {{0, 0, 48, 1}});
  const auto ok = first_pages(s, 0, 2);
  auto wrong_groups = ok;
  wrong_groups.pop_back();
  EXPECT_THROW(s.adopt(1, wrong_groups, 32, false, 0), Error);
  EXPECT_THROW(s.adopt(1, ok, 40, false, 0), Error);  // 40 positions need 3 pages
  auto hole = ok;
  hole[0][0] = -1;  // a full-attention group never releases
  EXPECT_THROW(s.adopt(1, hole, 32, false, 0), Error);
  auto free_page = ok;
  free_page[0][1] = 1000;
  EXPECT_THROW(s.adopt(1, free_page, 32, false, 0), Error);
  EXPECT_THROW(s.adopt(0, ok, 32, false, 0), Error);  // slot 0 is not empty
  EXPECT_EQ(s.n_tokens(1), 0);
  EXPECT_EQ(s.pool().ref_count(s.arena_of(0, 0), ok[0][0]), 1);  // nothing retained
}

// Full-precision pages past quant_start: the adopting slot converts at once,
// as one that computed them would have after the crossing append.
TEST(Adopt, UnquantizedPastQuantStartConverts) {
  ModelConfig c = tiny_config({0});
  PagedKvOptions o = f32_options(16);
  o.quant = uniform_scheme(c, 8, 32, 40);
  PagedKvState s(c, o);
  run_step(s, c, {{0, 0, 32, 1}});
  run_step(s, c, {{1, 0, 16, 2}});
  ASSERT_FALSE(s.is_quantized(0));
  std::vector<std::vector<int32_t>> pages = first_pages(s, 0, 2);
  pages[0].push_back(s.page_ids(1, 0)[0]);
  const int64_t before = s.pool().used_bytes();
  s.adopt(2, pages, 48, false, 0);
  EXPECT_TRUE(s.is_quantized(2));
  EXPECT_EQ(s.min_reusable_tokens(2), 48);
  EXPECT_EQ(s.pool().used_bytes() - before, 3 * s.pool().page_bytes(s.arena_of(2, 0)));
  for (int32_t id : pages[0]) EXPECT_EQ(s.pool().ref_count(s.arena_of(0, 0), id), 1);
}

// bytes_to_append(slot, n) against the pool: net growth where nothing is freed
// during the append, and the peak (a budget of exactly that much fits, one
// byte less does not).
struct Case {
  std::function<void(PagedKvState&)> setup;
  std::vector<SpanSpec> append;
};

int64_t predicted(const PagedKvState& s, const std::vector<SpanSpec>& append) {
  int64_t bytes = 0;
  for (const SpanSpec& sp : append) bytes += s.bytes_to_append(sp.slot, sp.n);
  return bytes;
}

void expect_peak(const ModelConfig& c, PagedKvOptions o, const Case& k, bool tight) {
  PagedKvState big(c, o);
  k.setup(big);
  const int64_t used = big.pool().used_bytes(), p = predicted(big, k.append);
  o.budget_bytes = used + p;
  PagedKvState fits(c, o);
  k.setup(fits);
  EXPECT_NO_THROW(run_step(fits, c, k.append));
  if (!tight) return;
  o.budget_bytes = used + p - 1;
  PagedKvState short_by_one(c, o);
  k.setup(short_by_one);
  EXPECT_THROW(run_step(short_by_one, c, k.append), Error);
}

TEST(BytesToAppend, EqualsNetGrowthWithoutRelease) {
  ModelConfig c = tiny_config({0, 0});
  PagedKvState s(c, f32_options(16));
  EXPECT_EQ(s.bytes_to_append(3, 0), 0);
  const int64_t page = s.pool().page_bytes(s.arena_of(0, 0));
  EXPECT_EQ(s.bytes_to_append(0, 40), 3 * page);  // one group of two layers
  std::vector<SpanSpec> steps = {{0, 0, 40, 1}, {0, 40, 30, 1}, {0, 70, 1, 1}};
  for (const SpanSpec& st : steps) {
    const int64_t before = s.pool().used_bytes(), p = s.bytes_to_append(0, st.n);
    run_step(s, c, {st});
    EXPECT_EQ(s.pool().used_bytes() - before, p) << "at " << st.begin;
  }
  s.fork(0, 1, 40);  // shares the partial page 32..48: the append copies it
  s.fork(0, 2, 64);
  const std::vector<SpanSpec> both = {{1, 40, 3, 2}, {2, 64, 20, 3}};
  const int64_t before = s.pool().used_bytes(), p = predicted(s, both);
  EXPECT_EQ(s.bytes_to_append(1, 3), page);
  run_step(s, c, both);
  EXPECT_EQ(s.pool().used_bytes() - before, p);
}

TEST(BytesToAppend, IsThePeakWithSlidingGroups) {
  ModelConfig c = tiny_config({0, 8});
  expect_peak(c, f32_options(16), {[](PagedKvState&) {}, {{0, 0, 40, 1}}}, true);
  expect_peak(c, f32_options(16),
              {[&](PagedKvState& s) {
                 run_step(s, c, {{0, 0, 40, 1}});
               },
               {{0, 40, 30, 1}}},
              true);
  expect_peak(c, f32_options(16, 20),
              {[&](PagedKvState& s) {
                 run_step(s, c, {{0, 0, 40, 1}});
                 s.fork(0, 1, 40);
               },
               {{1, 40, 9, 2}, {2, 0, 20, 3}}},
              true);
}

TEST(BytesToAppend, CoversTheConversion) {
  ModelConfig c = tiny_config({0, 16});
  PagedKvOptions o = f32_options(16);
  o.quant = uniform_scheme(c, 8, 32, 40);
  const auto setup = [&](PagedKvState& s) {
    run_step(s, c, {{0, 0, 20, 1}});
    s.fork(0, 1, 20);
  };
  PagedKvState s(c, o);
  setup(s);
  const int64_t full_only = 6 * s.pool().page_bytes(s.arena_of(0, 0));  // new + copied
  const int64_t p = s.bytes_to_append(0, 30), before = s.pool().used_bytes();
  EXPECT_GT(p, full_only);  // it counts the quantized pages too
  run_step(s, c, {{0, 20, 30, 1}});
  EXPECT_TRUE(s.is_quantized(0));
  EXPECT_LE(s.pool().used_bytes() - before, p);
  expect_peak(c, o, {setup, {{0, 20, 30, 1}}}, false);

  // Unshared: the quantized part is what the sequence holds afterwards (the
  // sliding group having released the pages below 50 - 16 first).
  PagedKvState alone(c, o);
  run_step(alone, c, {{0, 0, 20, 1}});
  const int64_t p_alone = alone.bytes_to_append(0, 30);
  const int64_t new_full = 4 * alone.pool().page_bytes(alone.arena_of(0, 0));
  run_step(alone, c, {{0, 20, 30, 1}});
  ASSERT_TRUE(alone.is_quantized(0));
  EXPECT_EQ(p_alone - new_full, alone.pool().used_bytes());
  EXPECT_EQ(alone.page_ids(0, 1)[1], -1);
  expect_peak(c, o, {setup, {{0, 20, 30, 1}, {1, 20, 25, 2}}}, false);
}

}  // namespace
}  // namespace cairn::test
