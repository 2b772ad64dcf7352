// Fast paths of the row-wise and elementwise ops against the reference, for
// every ISA the processor has, on awkward sizes and never on zeros.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "backend/ops.h"
#include "core/error.h"
#include "op_test_util.h"

namespace cairn {
namespace {

using test::copy_of;
using test::max_rel_error;
using test::random_tensor;
using test::to_vector;

constexpr double kF32Bound = 1e-5;
const int64_t kWidths[] = {1, 7, 17, 33, 129, 1000};

class Pointwise : public ::testing::TestWithParam<ops::cpu::Isa> {
 protected:
  test::IsaScope scope_{GetParam()};
};

TEST_P(Pointwise, Embedding) {
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16})
    for (int64_t d : kWidths) {
      Tensor table = random_tensor({50, d}, dt, 1);
      std::vector<int32_t> ids = {49, 0, 7, 7, 31};
      Tensor y = Tensor::empty({5, d}, DType::kF32), y_ref = Tensor::empty({5, d}, DType::kF32);
      ops::embedding(table, ids, y);
      ops::ref::embedding(table, ids, y_ref);
      EXPECT_TRUE(test::bit_equal(y, y_ref)) << dtype_name(dt) << " d " << d;
    }
}

TEST_P(Pointwise, RmsNormAndLayerNorm) {
  for (int64_t d : kWidths) {
    Tensor x = random_tensor({3, d}, DType::kF32, 2, 5.0f);
    Tensor w = random_tensor({d}, DType::kF32, 3), b = random_tensor({d}, DType::kF32, 4);
    Tensor y = Tensor::empty(x.shape(), DType::kF32), y_ref = Tensor::empty(x.shape(), DType::kF32);
    ops::rms_norm(x, w, 1e-6f, y);
    ops::ref::rms_norm(x, w, 1e-6f, y_ref);
    EXPECT_LT(max_rel_error(to_vector(y), to_vector(y_ref)), kF32Bound) << "rms d " << d;
    if (d == 1) continue;  // a one-element layer norm is 0 * w + b: nothing to compare
    ops::layer_norm(x, w, &b, 1e-5f, y);
    ops::ref::layer_norm(x, w, &b, 1e-5f, y_ref);
    EXPECT_LT(max_rel_error(to_vector(y), to_vector(y_ref)), kF32Bound) << "ln d " << d;
    Tensor in_place = copy_of(x);
    ops::rms_norm(in_place, w, 1e-6f, in_place);
    ops::rms_norm(x, w, 1e-6f, y);
    EXPECT_TRUE(test::bit_equal(in_place, y)) << "aliasing changed rms_norm";
  }
}

// add_rms_norm is add then rms_norm, bit for bit; y may not alias x or r.
TEST_P(Pointwise, AddRmsNormIsAddThenRmsNorm) {
  for (int64_t d : {1, 7, 64, 4099}) {
    Tensor x = random_tensor({3, d}, DType::kF32, 12, 5.0f),
           r = random_tensor({3, d}, DType::kF32, 13);
    Tensor w = random_tensor({d}, DType::kF32, 14);
    Tensor x2 = copy_of(x), y = Tensor::empty(x.shape(), DType::kF32);
    Tensor y2 = Tensor::empty(x.shape(), DType::kF32);
    ops::add_rms_norm(x, r, w, 1e-6f, y);
    ops::add(x2, r, x2);
    ops::rms_norm(x2, w, 1e-6f, y2);
    EXPECT_TRUE(test::bit_equal(x, x2)) << "d " << d;
    EXPECT_TRUE(test::bit_equal(y, y2)) << "d " << d;
    EXPECT_THROW(ops::add_rms_norm(x, r, w, 1e-6f, x), Error);
  }
}

TEST_P(Pointwise, RopeBothLayoutsAndPartialRotary) {
  for (auto layout : {ops::RopeLayout::kHalfSplit, ops::RopeLayout::kInterleaved})
    for (auto [head_dim, rotary] : {std::pair{64, 64}, {80, 32}, {34, 34}, {10, 6}, {2, 2}}) {
      std::vector<float> inv;
      for (int i = 0; i < rotary / 2; ++i)
        inv.push_back(static_cast<float>(std::pow(500000.0, -2.0 * i / rotary)));
      Tensor x = random_tensor({5, 3, head_dim}, DType::kF32, 5);
      Tensor x_ref = copy_of(x);
      std::vector<int32_t> pos = {0, 1, 17, 4095, 131071};
      const ops::RopeParams p{inv, rotary, layout, 1.1f};
      ops::rope(x, pos, p);
      ops::ref::rope(x_ref, pos, p);
      EXPECT_LT(max_rel_error(to_vector(x), to_vector(x_ref)), kF32Bound)
          << "head_dim " << head_dim << " rotary " << rotary;
    }
}

TEST_P(Pointwise, GatedActivations) {
  for (auto act : {ops::Activation::kSilu, ops::Activation::kGeluTanh})
    for (int64_t d : kWidths) {
      Tensor g = random_tensor({3, d}, DType::kF32, 6, 12.0f);
      Tensor u = random_tensor({3, d}, DType::kF32, 7);
      Tensor y = Tensor::empty(g.shape(), DType::kF32),
             y_ref = Tensor::empty(g.shape(), DType::kF32);
      ops::gated_activation(g, u, act, y);
      ops::ref::gated_activation(g, u, act, y_ref);
      // Relative error per element (f32 exp of an argument z is good to about
      // |z| ulp, so tails far from zero need the full f32 bound).
      auto a = to_vector(y), r = to_vector(y_ref);
      for (size_t i = 0; i < a.size(); ++i)
        ASSERT_LE(std::fabs(a[i] - r[i]), kF32Bound * std::fabs(r[i]) + 1e-30)
            << "d " << d << " i " << i << " g " << to_vector(g)[i] << " u " << to_vector(u)[i]
            << " act " << int(act);
    }
}

// The halves of a fused gate|up output [3, 2d], each copied into a tensor of its own.
std::pair<Tensor, Tensor> halves(const Tensor& gu) {
  const int64_t n = gu.dim(0), d = gu.dim(1) / 2;
  Tensor g = Tensor::empty({n, d}, DType::kF32), u = Tensor::empty({n, d}, DType::kF32);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) {
      g.data<float>()[i * d + j] = gu.data<float>()[i * 2 * d + j];
      u.data<float>()[i * d + j] = gu.data<float>()[i * 2 * d + d + j];
    }
  return {g, u};
}

TEST_P(Pointwise, GatedActivationFusedEqualsItOverTheSplitHalves) {
  for (auto act : {ops::Activation::kSilu, ops::Activation::kGeluTanh})
    for (int64_t d : kWidths) {
      const Tensor gu = random_tensor({3, 2 * d}, DType::kF32, 9, 12.0f);
      const auto [g, u] = halves(gu);
      Tensor y = Tensor::empty({3, d}, DType::kF32), want = Tensor::empty({3, d}, DType::kF32);
      ops::gated_activation_fused(gu, act, y);
      ops::gated_activation(g, u, act, want);
      EXPECT_TRUE(test::bit_equal(y, want)) << "d " << d << " act " << int(act);
      ops::ref::gated_activation_fused(gu, act, y);
      ops::ref::gated_activation(g, u, act, want);
      EXPECT_TRUE(test::bit_equal(y, want)) << "reference, d " << d << " act " << int(act);
    }
  Tensor gu = random_tensor({3, 8}, DType::kF32, 9), odd = Tensor::empty({3, 5}, DType::kF32);
  EXPECT_THROW(ops::gated_activation_fused(gu, ops::Activation::kSilu, odd), Error);
  Tensor half = Tensor::view_of(gu.storage(), 0, {3, 4}, DType::kF32);  // overlaps gu
  EXPECT_THROW(ops::gated_activation_fused(gu, ops::Activation::kSilu, half), Error);
}

TEST_P(Pointwise, SoftmaxLogSoftmax) {
  for (int64_t d : kWidths) {
    Tensor x = random_tensor({4, d}, DType::kF32, 8, 30.0f);
    Tensor y = Tensor::empty(x.shape(), DType::kF32), y_ref = Tensor::empty(x.shape(), DType::kF32);
    ops::softmax(x, y);
    ops::ref::softmax(x, y_ref);
    EXPECT_LT(max_rel_error(to_vector(y), to_vector(y_ref)), kF32Bound) << "softmax d " << d;
    ops::log_softmax(x, y);
    ops::ref::log_softmax(x, y_ref);
    EXPECT_LT(max_rel_error(to_vector(y), to_vector(y_ref)), kF32Bound) << "log d " << d;
    Tensor in_place = copy_of(x);
    ops::log_softmax(in_place, in_place);
    EXPECT_TRUE(test::bit_equal(in_place, y)) << "aliasing changed log_softmax";
  }
}

TEST_P(Pointwise, AddScaleSoftcap) {
  for (int64_t n : {1, 7, 33, 1000, 70001}) {
    Tensor a = random_tensor({n}, DType::kF32, 9, 40.0f), b = random_tensor({n}, DType::kF32, 10);
    Tensor y = Tensor::empty(a.shape(), DType::kF32), y_ref = Tensor::empty(a.shape(), DType::kF32);
    ops::add(a, b, y);
    ops::ref::add(a, b, y_ref);
    EXPECT_TRUE(test::bit_equal(y, y_ref));
    ops::scale(y, -0.37f);
    ops::ref::scale(y_ref, -0.37f);
    EXPECT_TRUE(test::bit_equal(y, y_ref));
    Tensor c = copy_of(a), c_ref = copy_of(a);
    ops::softcap(c, 30.0f);
    ops::ref::softcap(c_ref, 30.0f);
    auto cv = to_vector(c), rv = to_vector(c_ref);
    for (size_t i = 0; i < cv.size(); ++i)
      ASSERT_LE(std::fabs(cv[i] - rv[i]), 2e-6 * std::fabs(rv[i]))
          << "softcap of " << to_vector(a)[i];
  }
}

TEST_P(Pointwise, ConvertEqualsReferenceBitForBit) {
  for (int64_t n : {1, 7, 17, 1000, 40001}) {
    Tensor src = random_tensor({n}, DType::kF32, 11, 3.0f);
    // Specials: zeros, infinities, a NaN, f16 subnormals, bf16 and f16 halfway cases.
    const float specials[] = {0.0f,     -0.0f, INFINITY,    -INFINITY,      NAN,      3e-6f,
                              -6.1e-5f, 1e-8f, 1.00390625f, 1.00048828125f, 65520.0f, 3.4e38f};
    for (size_t i = 0; i < std::size(specials) && static_cast<int64_t>(i) < n; ++i)
      src.data<float>()[i] = specials[i];
    for (DType a : {DType::kF32, DType::kBF16, DType::kF16})
      for (DType b : {DType::kF32, DType::kBF16, DType::kF16}) {
        Tensor mid = Tensor::empty(src.shape(), a), mid_ref = Tensor::empty(src.shape(), a);
        ops::convert(src, mid);
        ops::ref::convert(src, mid_ref);
        ASSERT_TRUE(test::bit_equal(mid, mid_ref)) << "f32 -> " << dtype_name(a) << " n " << n;
        Tensor out = Tensor::empty(src.shape(), b), out_ref = Tensor::empty(src.shape(), b);
        ops::convert(mid, out);
        ops::ref::convert(mid, out_ref);
        ASSERT_TRUE(test::bit_equal(out, out_ref)) << dtype_name(a) << " -> " << dtype_name(b);
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, Pointwise, ::testing::ValuesIn(test::available_isas()),
                         [](const auto& info) { return ops::cpu::isa_name(info.param); });

}  // namespace
}  // namespace cairn
