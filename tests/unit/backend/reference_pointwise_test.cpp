// The reference rope, activations and softmax against formulas computed here.
#include <gtest/gtest.h>

#include <cmath>

#include "../../ops/cpu/op_test_util.h"
#include "backend/cpu/reference/reference.h"

namespace cairn {
namespace {

using test::max_rel_error;
using test::random_tensor;
using test::to_vector;

// Rotation of pair (a, b) by position * inv_freq in double.
void rotate(double* a, double* b, double angle, double factor) {
  const double c = std::cos(angle) * factor, s = std::sin(angle) * factor;
  const double a0 = *a, b0 = *b;
  *a = a0 * c - b0 * s;
  *b = b0 * c + a0 * s;
}

void check_rope(ops::RopeLayout layout, int rotary_dim) {
  const int64_t n = 3, heads = 2, hd = 10;
  Tensor x = random_tensor({n, heads, hd}, DType::kF32, 11);
  const auto xv = to_vector(x);
  std::vector<double> want(xv.begin(), xv.end());
  std::vector<float> inv_freq;
  for (int i = 0; i < rotary_dim / 2; ++i)
    inv_freq.push_back(static_cast<float>(std::pow(10000.0, -2.0 * i / rotary_dim)));
  std::vector<int32_t> pos = {0, 5, 1234};
  for (int64_t t = 0; t < n; ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int i = 0; i < rotary_dim / 2; ++i) {
        double* row = want.data() + (t * heads + h) * hd;
        const bool split = layout == ops::RopeLayout::kHalfSplit;
        const float angle = static_cast<float>(pos[static_cast<size_t>(t)]) * inv_freq[size_t(i)];
        rotate(split ? &row[i] : &row[2 * i], split ? &row[i + rotary_dim / 2] : &row[2 * i + 1],
               angle, 0.75);
      }
  ops::RopeParams p{inv_freq, rotary_dim, layout, 0.75f};
  ops::ref::rope(x, pos, p);
  EXPECT_LT(max_rel_error(to_vector(x), want), 1e-6);
}

TEST(RefRope, HalfSplitFullAndPartial) {
  check_rope(ops::RopeLayout::kHalfSplit, 10);
  check_rope(ops::RopeLayout::kHalfSplit, 6);
}

TEST(RefRope, InterleavedFullAndPartial) {
  check_rope(ops::RopeLayout::kInterleaved, 10);
  check_rope(ops::RopeLayout::kInterleaved, 4);
}

TEST(RefActivation, SiluAndGeluTanhMatchFormulas) {
  Tensor g = random_tensor({3, 17}, DType::kF32, 12, 4.0f);
  Tensor u = random_tensor({3, 17}, DType::kF32, 13);
  auto gv = to_vector(g), uv = to_vector(u);
  for (auto act : {ops::Activation::kSilu, ops::Activation::kGeluTanh}) {
    Tensor out = Tensor::empty(g.shape(), DType::kF32);
    ops::ref::gated_activation(g, u, act, out);
    std::vector<double> want;
    for (size_t i = 0; i < gv.size(); ++i) {
      const double x = gv[i];
      const double a =
          act == ops::Activation::kSilu
              ? x / (1 + std::exp(-x))
              : 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
      want.push_back(a * uv[i]);
    }
    EXPECT_LT(max_rel_error(to_vector(out), want), 1e-6);
  }
}

TEST(RefSoftmax, RowsSumToOneAndLogMatches) {
  Tensor x = random_tensor({3, 33}, DType::kF32, 14, 20.0f);
  Tensor y = Tensor::empty(x.shape(), DType::kF32), ly = Tensor::empty(x.shape(), DType::kF32);
  ops::ref::softmax(x, y);
  ops::ref::log_softmax(x, ly);
  auto xv = to_vector(x);
  std::vector<double> want, want_log;
  for (int r = 0; r < 3; ++r) {
    double s = 0;
    for (int c = 0; c < 33; ++c) s += std::exp(double{xv[size_t(r * 33 + c)]});
    for (int c = 0; c < 33; ++c) {
      want.push_back(std::exp(double{xv[size_t(r * 33 + c)]}) / s);
      want_log.push_back(xv[size_t(r * 33 + c)] - std::log(s));
    }
  }
  EXPECT_LT(max_rel_error(to_vector(y), want), 1e-6);
  EXPECT_LT(max_rel_error(to_vector(ly), want_log), 1e-6);
}

TEST(RefElementwise, AddScaleSoftcap) {
  Tensor a = random_tensor({7, 3}, DType::kF32, 15, 50.0f);
  Tensor b = random_tensor({7, 3}, DType::kF32, 16);
  Tensor y = Tensor::empty(a.shape(), DType::kF32);
  ops::ref::add(a, b, y);
  auto av = to_vector(a), bv = to_vector(b);
  for (size_t i = 0; i < av.size(); ++i) EXPECT_EQ(y.data<float>()[i], av[i] + bv[i]);
  ops::ref::scale(y, 0.5f);
  for (size_t i = 0; i < av.size(); ++i) EXPECT_EQ(y.data<float>()[i], (av[i] + bv[i]) * 0.5f);
  ops::ref::softcap(a, 30.0f);
  std::vector<double> want;
  for (float v : av) want.push_back(30.0 * std::tanh(v / 30.0));
  EXPECT_LT(max_rel_error(to_vector(a), want), 1e-6);
}

}  // namespace
}  // namespace cairn
