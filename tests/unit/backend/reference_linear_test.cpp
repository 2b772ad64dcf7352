// The reference ops against double-precision computations written here.
#include <gtest/gtest.h>

#include <cmath>

#include "../../ops/cpu/op_test_util.h"
#include "backend/cpu/reference/reference.h"

namespace cairn {
namespace {

using test::max_rel_error;
using test::random_tensor;
using test::to_vector;

class RefMatmul : public ::testing::TestWithParam<DType> {};

TEST_P(RefMatmul, MatchesDoubleDotProducts) {
  const int64_t n = 3, k = 33, m = 17;
  Tensor x = random_tensor({n, k}, DType::kF32, 1);
  Tensor w = random_tensor({m, k}, GetParam(), 2);
  Tensor bias = random_tensor({m}, DType::kF32, 3);
  Tensor y = Tensor::empty({n, m}, DType::kF32);
  ops::ref::matmul(x, w, &bias, y);
  auto xv = to_vector(x), wv = to_vector(w), bv = to_vector(bias);
  std::vector<double> want;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double s = bv[static_cast<size_t>(j)];
      for (int64_t c = 0; c < k; ++c)
        s += double{xv[static_cast<size_t>(i * k + c)]} * wv[static_cast<size_t>(j * k + c)];
      want.push_back(s);
    }
  EXPECT_LT(max_rel_error(to_vector(y), want), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, RefMatmul,
                         ::testing::Values(DType::kF32, DType::kBF16, DType::kF16));

TEST(RefEmbedding, CopiesRowsOfEveryDtype) {
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16}) {
    Tensor table = random_tensor({10, 7}, dt, 4);
    std::vector<int32_t> ids = {3, 0, 9, 3};
    Tensor y = Tensor::empty({4, 7}, DType::kF32);
    ops::ref::embedding(table, ids, y);
    auto tv = to_vector(table), yv = to_vector(y);
    for (size_t i = 0; i < ids.size(); ++i)
      for (size_t c = 0; c < 7; ++c)
        EXPECT_EQ(yv[i * 7 + c], tv[static_cast<size_t>(ids[i]) * 7 + c]);
  }
}

TEST(RefRmsNorm, MatchesFormula) {
  const int64_t n = 3, d = 129;
  Tensor x = random_tensor({n, d}, DType::kF32, 5, 3.0f);
  Tensor w = random_tensor({d}, DType::kF32, 6);
  Tensor y = Tensor::empty({n, d}, DType::kF32);
  ops::ref::rms_norm(x, w, 1e-5f, y);
  auto xv = to_vector(x), wv = to_vector(w);
  std::vector<double> want;
  for (int64_t r = 0; r < n; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < d; ++c) ss += std::pow(xv[static_cast<size_t>(r * d + c)], 2);
    double rms = std::sqrt(ss / d + 1e-5);
    for (int64_t c = 0; c < d; ++c)
      want.push_back(xv[static_cast<size_t>(r * d + c)] / rms * wv[static_cast<size_t>(c)]);
  }
  EXPECT_LT(max_rel_error(to_vector(y), want), 1e-6);
}

TEST(RefLayerNorm, MatchesFormulaWithAndWithoutBias) {
  const int64_t n = 2, d = 33;
  Tensor x = random_tensor({n, d}, DType::kF32, 7, 2.0f);
  Tensor w = random_tensor({d}, DType::kF32, 8);
  Tensor b = random_tensor({d}, DType::kF32, 9);
  auto xv = to_vector(x), wv = to_vector(w), bv = to_vector(b);
  for (bool with_bias : {false, true}) {
    Tensor y = Tensor::empty({n, d}, DType::kF32);
    ops::ref::layer_norm(x, w, with_bias ? &b : nullptr, 1e-6f, y);
    std::vector<double> want;
    for (int64_t r = 0; r < n; ++r) {
      double mean = 0, var = 0;
      for (int64_t c = 0; c < d; ++c) mean += xv[static_cast<size_t>(r * d + c)] / double(d);
      for (int64_t c = 0; c < d; ++c)
        var += std::pow(xv[static_cast<size_t>(r * d + c)] - mean, 2) / double(d);
      for (int64_t c = 0; c < d; ++c)
        want.push_back((xv[static_cast<size_t>(r * d + c)] - mean) / std::sqrt(var + 1e-6) *
                           wv[static_cast<size_t>(c)] +
                       (with_bias ? bv[static_cast<size_t>(c)] : 0.0));
    }
    EXPECT_LT(max_rel_error(to_vector(y), want), 1e-6) << "bias " << with_bias;
  }
}

TEST(RefConvert, RoundTripsAndRoundsToNearestEven) {
  Tensor src = random_tensor({5, 7}, DType::kF32, 10);
  for (DType dt : {DType::kBF16, DType::kF16, DType::kF32}) {
    Tensor mid = Tensor::empty(src.shape(), dt);
    ops::ref::convert(src, mid);
    Tensor back = Tensor::empty(src.shape(), DType::kF32);
    ops::ref::convert(mid, back);
    const double bound = dt == DType::kBF16 ? 1.0 / 256 : dt == DType::kF16 ? 1.0 / 2048 : 0;
    auto sv = to_vector(src), bv = to_vector(back);
    for (size_t i = 0; i < sv.size(); ++i)
      EXPECT_LE(std::fabs(sv[i] - bv[i]), bound * std::fabs(sv[i])) << dtype_name(dt);
  }
  // 1 + 2^-8 is halfway between two bf16 values: ties go to the even one (1.0).
  Tensor one = Tensor::empty({1}, DType::kF32);
  one.data<float>()[0] = 1.0f + 1.0f / 256;
  Tensor h = Tensor::empty({1}, DType::kBF16);
  ops::ref::convert(one, h);
  EXPECT_EQ(h.data<uint16_t>()[0], 0x3f80);
}

}  // namespace
}  // namespace cairn
