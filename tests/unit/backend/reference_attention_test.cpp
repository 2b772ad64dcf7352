// The reference attention against a direct double-precision softmax(QKᵀ)V
// with an explicit mask, for GQA, sliding windows and softcaps.
#include <gtest/gtest.h>

#include <cmath>

#include "../../ops/cpu/op_test_util.h"
#include "backend/cpu/reference/reference.h"

namespace cairn {
namespace {

using test::max_rel_error;
using test::random_tensor;
using test::to_vector;

struct Case {
  int64_t n_q, n_kv, n_heads, n_kv_heads, head_dim;
  int32_t window;
  float softcap;
  DType kv_dtype;
};

std::vector<double> direct_attention(const Case& c, const std::vector<float>& q,
                                     const std::vector<float>& k, const std::vector<float>& v,
                                     const std::vector<int32_t>& qp, const std::vector<int32_t>& kp,
                                     double scale) {
  std::vector<double> out;
  const int64_t group = c.n_heads / c.n_kv_heads;
  for (int64_t t = 0; t < c.n_q; ++t)
    for (int64_t h = 0; h < c.n_heads; ++h) {
      std::vector<double> w(static_cast<size_t>(c.n_kv), 0.0);
      double total = 0;
      for (int64_t j = 0; j < c.n_kv; ++j) {
        bool seen = kp[size_t(j)] <= qp[size_t(t)] &&
                    (c.window == 0 || qp[size_t(t)] - kp[size_t(j)] < c.window);
        if (!seen) continue;
        double s = 0;
        for (int64_t d = 0; d < c.head_dim; ++d)
          s += q[size_t((t * c.n_heads + h) * c.head_dim + d)] *
               double{k[size_t((j * c.n_kv_heads + h / group) * c.head_dim + d)]};
        s *= scale;
        if (c.softcap > 0) s = c.softcap * std::tanh(s / c.softcap);
        w[size_t(j)] = std::exp(s);
        total += w[size_t(j)];
      }
      for (int64_t d = 0; d < c.head_dim; ++d) {
        double o = 0;
        for (int64_t j = 0; j < c.n_kv; ++j)
          o += w[size_t(j)] * v[size_t((j * c.n_kv_heads + h / group) * c.head_dim + d)];
        out.push_back(total > 0 ? o / total : 0.0);
      }
    }
  return out;
}

class RefAttention : public ::testing::TestWithParam<Case> {};

TEST_P(RefAttention, MatchesDirectSoftmax) {
  const Case c = GetParam();
  Tensor q = random_tensor({c.n_q, c.n_heads, c.head_dim}, DType::kF32, 21);
  Tensor k = random_tensor({c.n_kv, c.n_kv_heads, c.head_dim}, c.kv_dtype, 22);
  Tensor v = random_tensor({c.n_kv, c.n_kv_heads, c.head_dim}, c.kv_dtype, 23);
  std::vector<int32_t> kp, qp;
  for (int64_t j = 0; j < c.n_kv; ++j) kp.push_back(static_cast<int32_t>(j));
  for (int64_t t = 0; t < c.n_q; ++t) qp.push_back(static_cast<int32_t>(c.n_kv - c.n_q + t));
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim)) * 3.0f;
  Tensor out = Tensor::empty(q.shape(), DType::kF32);
  ops::ref::attention(q, k, v, qp, kp, {scale, c.softcap, c.window}, out);
  auto want = direct_attention(c, to_vector(q), to_vector(k), to_vector(v), qp, kp, scale);
  EXPECT_LT(max_rel_error(to_vector(out), want), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RefAttention,
    ::testing::Values(Case{5, 5, 2, 2, 8, 0, 0, DType::kF32},     // causal prefill
                      Case{1, 17, 4, 2, 16, 0, 0, DType::kF32},   // decode, GQA 2
                      Case{7, 20, 6, 2, 12, 4, 0, DType::kBF16},  // window, GQA 3
                      Case{3, 9, 2, 1, 8, 0, 5.0f, DType::kF16},  // softcap, MQA
                      Case{4, 30, 4, 4, 8, 6, 3.0f, DType::kF32}));

TEST(RefAttention, QueryWithoutVisibleKeysGetsZeros) {
  Tensor q = random_tensor({1, 1, 4}, DType::kF32, 1);
  Tensor k = random_tensor({2, 1, 4}, DType::kF32, 2);
  Tensor out = random_tensor({1, 1, 4}, DType::kF32, 3);
  std::vector<int32_t> qp = {0}, kp = {5, 6};
  ops::ref::attention(q, k, k, qp, kp, {}, out);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out.data<float>()[i], 0.0f);
}

}  // namespace
}  // namespace cairn
