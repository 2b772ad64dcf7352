// split_columns on the CPU: each part gets its columns of every row; and its checks. split_rope
// (the split with q and k rotated): the same as the split followed by rope, and its checks.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../../ops/cpu/op_test_util.h"
#include "backend/ops.h"
#include "core/error.h"
#include "expect_invalid.h"

namespace cairn {
namespace {

TEST(SplitColumns, EachPartGetsItsColumns) {
  const Tensor x = test::random_tensor({5, 11}, DType::kF32, 3);
  Tensor a = Tensor::zeros({5, 4}, DType::kF32), b = Tensor::zeros({5, 0}, DType::kF32),
         c = Tensor::zeros({5, 7}, DType::kF32);
  std::vector<Tensor*> parts = {&a, &b, &c};
  ops::split_columns(x, parts);
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t j = 0; j < 11; ++j) {
      const float want = x.data<float>()[r * 11 + j];
      const float got = j < 4 ? a.data<float>()[r * 4 + j] : c.data<float>()[r * 7 + j - 4];
      EXPECT_EQ(got, want) << "row " << r << " column " << j;
    }
}

TEST(SplitColumns, ChecksItsArguments) {
  const Tensor x = test::random_tensor({5, 11}, DType::kF32, 3);
  Tensor a = Tensor::zeros({5, 4}, DType::kF32), c = Tensor::zeros({5, 6}, DType::kF32);
  std::vector<Tensor*> short_parts = {&a, &c};
  test::expect_invalid([&] { ops::split_columns(x, short_parts); }, "columns");
  Tensor rows = Tensor::zeros({4, 7}, DType::kF32);
  std::vector<Tensor*> bad_rows = {&a, &rows};
  test::expect_invalid([&] { ops::split_columns(x, bad_rows); }, "rows");
}

// q, k, v of a fused [n, (3 + 2·1) · 6] output (3 query heads, 1 KV head, head_dim 6,
// rotary_dim 4) for a rope of `layout`.
struct SplitRopeCase {
  int64_t n = 4;
  std::vector<float> inv{1.0f, 0.01f};
  std::vector<int32_t> pos{0, 3, 17, 1000};
  Tensor qkv = test::random_tensor({4, 30}, DType::kF32, 11);
  Tensor q = Tensor::zeros({4, 3, 6}, DType::kF32), k = Tensor::zeros({4, 1, 6}, DType::kF32),
         v = Tensor::zeros({4, 1, 6}, DType::kF32);

  // What split_rope must give: split_columns, the head norms' rms_norm over head rows, then rope
  // ([4, 18], [4, 6], [4, 6]).
  std::vector<Tensor> composed(const ops::RopeParams& p, const ops::HeadNorms& norms = {}) const {
    Tensor q2 = Tensor::zeros({4, 18}, DType::kF32), k2 = Tensor::zeros({4, 6}, DType::kF32),
           v2 = Tensor::zeros({4, 6}, DType::kF32);
    std::vector<Tensor*> parts = {&q2, &k2, &v2};
    ops::split_columns(qkv, parts);
    Tensor q_rows = q2.reshape({12, 6}), k_rows = k2.reshape({4, 6});
    if (norms.q) ops::rms_norm(q_rows, *norms.q, norms.eps, q_rows);
    if (norms.k) ops::rms_norm(k_rows, *norms.k, norms.eps, k_rows);
    Tensor q3 = q2.reshape({4, 3, 6}), k3 = k2.reshape({4, 1, 6});
    ops::rope(q3, pos, p);
    ops::rope(k3, pos, p);
    return {q2, k2, v2};
  }
};

TEST(SplitRope, EqualsTheSplitThenRope) {
  for (auto layout : {ops::RopeLayout::kHalfSplit, ops::RopeLayout::kInterleaved}) {
    SplitRopeCase c;
    const ops::RopeParams p{c.inv, 4, layout, 1.0f};
    ops::split_rope(c.qkv, c.pos, p, c.q, c.k, c.v);
    const std::vector<Tensor> want = c.composed(p);
    const Tensor &q = want[0], &k = want[1];
    for (int64_t i = 0; i < 18 * 4; ++i) EXPECT_EQ(c.q.data<float>()[i], q.data<float>()[i]) << i;
    for (int64_t i = 0; i < 6 * 4; ++i) {
      EXPECT_EQ(c.k.data<float>()[i], k.data<float>()[i]) << i;
      EXPECT_EQ(c.v.data<float>()[i], c.qkv.data<float>()[(i / 6) * 30 + 24 + i % 6]) << i;
    }
    // Token 1's first query pair (0, 2) turned by 3 radians (half-split): not a copy.
    if (layout == ops::RopeLayout::kHalfSplit) {
      const float a = c.qkv.data<float>()[30], b = c.qkv.data<float>()[32];
      EXPECT_NEAR(c.q.data<float>()[18], a * std::cos(3.0f) - b * std::sin(3.0f), 1e-5);
    }
  }
}

TEST(SplitRope, ChecksItsArguments) {
  SplitRopeCase c;
  const ops::RopeParams p{c.inv, 4, ops::RopeLayout::kHalfSplit, 1.0f};
  Tensor wide_k = Tensor::zeros({4, 2, 6}, DType::kF32);
  test::expect_invalid([&] { ops::split_rope(c.qkv, c.pos, p, c.q, wide_k, c.v); }, "differ");
  Tensor k2 = Tensor::zeros({4, 2, 6}, DType::kF32), v2 = Tensor::zeros({4, 2, 6}, DType::kF32);
  test::expect_invalid([&] { ops::split_rope(c.qkv, c.pos, p, c.q, k2, v2); }, "columns");
  const std::vector<int32_t> short_pos{0, 1};
  test::expect_invalid([&] { ops::split_rope(c.qkv, short_pos, p, c.q, c.k, c.v); }, "positions");
  test::expect_invalid([&] { ops::split_rope(c.qkv, c.pos, p, c.q, c.q, c.v); }, "differ");
  Tensor q_alias = Tensor::view_of(c.qkv.storage(), 0, {4, 3, 6}, DType::kF32);
  test::expect_invalid([&] { ops::split_rope(c.qkv, c.pos, p, q_alias, c.k, c.v); }, "overlap");
  const Tensor short_w = test::random_tensor({5}, DType::kF32, 2);
  test::expect_invalid(
      [&] {
        ops::split_rope(c.qkv, c.pos, p, c.q, c.k, c.v, {&short_w, nullptr, 1e-6f});
      },
      "head norm");
}

// With q_norm and k_norm (Qwen3, Gemma 3): each head row RMS-normed before its rotation, as
// rms_norm over [n · heads, head_dim] rows then rope give it; v untouched by either norm.
TEST(SplitRope, WithHeadNormsEqualsTheSplitNormsThenRope) {
  SplitRopeCase c;
  const ops::RopeParams p{c.inv, 4, ops::RopeLayout::kHalfSplit, 1.0f};
  const Tensor qw = test::random_tensor({6}, DType::kF32, 5),
               kw = test::random_tensor({6}, DType::kF32, 6);
  ops::split_rope(c.qkv, c.pos, p, c.q, c.k, c.v, {&qw, &kw, 1e-6f});
  const std::vector<Tensor> want = c.composed(p, {&qw, &kw, 1e-6f});
  const Tensor &q = want[0], &k = want[1], &v = want[2];
  for (int64_t i = 0; i < 18 * 4; ++i) EXPECT_EQ(c.q.data<float>()[i], q.data<float>()[i]) << i;
  for (int64_t i = 0; i < 6 * 4; ++i) {
    EXPECT_EQ(c.k.data<float>()[i], k.data<float>()[i]) << i;
    EXPECT_EQ(c.v.data<float>()[i], v.data<float>()[i]) << i;
  }
  // A normed head row has an RMS of ~1 before the weights: its dims past rotary_dim (4, 5),
  // divided by their weights, are no longer the raw values.
  EXPECT_NE(c.k.data<float>()[4], c.qkv.data<float>()[18 + 4]);
}

}  // namespace
}  // namespace cairn
