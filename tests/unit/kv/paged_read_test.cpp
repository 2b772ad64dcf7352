// Paged reads against the contiguous cache (bit for bit, full precision f32)
// and both against the double-precision reference attention (independent oracle).
#include <gtest/gtest.h>

#include "backend/cpu/reference/reference.h"
#include "kv/contiguous_cache.h"
#include "kv/paged_kv.h"
#include "kv_test_util.h"

namespace cairn::test {
namespace {

// Two sequences of different lengths: chunked prefills crossing page
// boundaries, then decode steps with both in one batch.
std::vector<std::vector<SpanSpec>> schedule() {
  std::vector<std::vector<SpanSpec>> steps = {
      {{0, 0, 13, 1}}, {{0, 13, 24, 1}, {1, 0, 5, 2}}, {{1, 5, 40, 2}}};
  for (int64_t i = 0; i < 20; ++i) steps.push_back({{1, 45 + i, 1, 2}, {0, 37 + i, 1, 1}});
  return steps;
}

class PagedReadTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(PagedReadTest, EqualsContiguousBitForBit) {
  // GQA 4 over 2 kv heads; a full layer, a sliding one (window 8), another full.
  for (std::vector<int32_t> windows : {std::vector<int32_t>{0, 8, 0}, std::vector<int32_t>{5}}) {
    ModelConfig c = tiny_config(windows);
    ContiguousKvCache ref(c, 2, 128);
    PagedKvState paged(c, f32_options(GetParam()));
    for (const auto& step : schedule()) {
      StepOut a = run_step(ref, c, step), b = run_step(paged, c, step, 0.0f);
      ASSERT_TRUE(bit_equal(a, b)) << "page_tokens " << GetParam();
    }
    EXPECT_EQ(paged.n_tokens(0), 57);
    EXPECT_EQ(paged.n_tokens(1), 65);
  }
}

TEST_P(PagedReadTest, SoftcapAndOddHeadDim) {
  ModelConfig c = tiny_config({0, 3}, 6, 3, 24);
  ContiguousKvCache ref(c, 2, 128);
  PagedKvState paged(c, f32_options(GetParam()));
  for (const auto& step : schedule())
    ASSERT_TRUE(bit_equal(run_step(ref, c, step, 30.0f), run_step(paged, c, step, 30.0f)));
}

INSTANTIATE_TEST_SUITE_P(PageSizes, PagedReadTest, ::testing::Values(1, 3, 16, 32, 64));

// One prefill step equals the reference attention over the same rows.
TEST(PagedRead, MatchesReferenceAttention) {
  for (int32_t window : {0, 7}) {
    ModelConfig c = tiny_config({window}, 4, 1, 64);
    PagedKvState paged(c, f32_options(16));
    const int64_t n = 50;
    StepOut out = run_step(paged, c, {{0, 0, n, 3}}, 20.0f);
    Tensor q = Tensor::empty({n, 4, 64}, DType::kF32), k = Tensor::empty({n, 1, 64}, DType::kF32);
    Tensor v = Tensor::empty({n, 1, 64}, DType::kF32), o = Tensor::empty({n, 4, 64}, DType::kF32);
    std::vector<int32_t> pos(n);
    for (int64_t t = 0; t < n; ++t) {
      pos[static_cast<size_t>(t)] = static_cast<int32_t>(t);
      for (int64_t i = 0; i < 256; ++i) q.data<float>()[t * 256 + i] = draw(3, 0, t, 0, i);
      for (int64_t i = 0; i < 64; ++i) {
        k.data<float>()[t * 64 + i] = draw(3, 0, t, 1, i);
        v.data<float>()[t * 64 + i] = draw(3, 0, t, 2, i);
      }
    }
    ops::ref::attention(q, k, v, pos, pos, {0.125f, 20.0f, window}, o);
    for (int64_t i = 0; i < o.numel(); ++i)
      ASSERT_NEAR(out[0][static_cast<size_t>(i)], o.data<float>()[i], 2e-5f) << "at " << i;
  }
}

// A sliding layer that frees pages out of the window reads what full attention
// under the window mask reads (the contiguous cache keeps every row and masks).
TEST(PagedRead, SlidingWindowReleasesPagesAndEqualsMaskedFull) {
  ModelConfig c = tiny_config({0, 8});
  ContiguousKvCache ref(c, 1, 256);
  PagedKvState paged(c, f32_options(4, 2));
  ASSERT_EQ(paged.groups().size(), 2u);
  ASSERT_TRUE(bit_equal(run_step(ref, c, {{0, 0, 30, 4}}), run_step(paged, c, {{0, 0, 30, 4}})));
  for (int64_t p = 30; p < 120; ++p) {
    ASSERT_TRUE(bit_equal(run_step(ref, c, {{0, p, 1, 4}}), run_step(paged, c, {{0, p, 1, 4}})));
    int live = 0;
    for (int32_t id : paged.page_ids(0, 1)) live += id >= 0;
    EXPECT_LE(live, (8 + 2) / 4 + 2) << "at position " << p;  // window + slack, page-rounded
  }
  EXPECT_EQ(static_cast<int64_t>(paged.page_ids(0, 0).size()), 30);  // full group keeps all
}

}  // namespace
}  // namespace cairn::test
