// Attention fast path: against the reference (GQA, windows, softcaps, every
// KV dtype, awkward sizes), and bit-identical for a query whatever else is in
// the batch, however the keys arrived, and whatever the thread count.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "backend/ops.h"
#include "core/thread_pool.h"
#include "op_test_util.h"

namespace cairn {
namespace {

using test::bit_equal;
using test::max_rel_error;
using test::random_tensor;
using test::to_vector;

struct Case {
  int64_t n_q, n_kv, n_heads, n_kv_heads, head_dim;
  int32_t window;
  float softcap;
};

std::vector<int32_t> iota(int64_t n, int32_t start) {
  std::vector<int32_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + static_cast<int32_t>(i));
  return v;
}

class AttentionFast : public ::testing::TestWithParam<std::tuple<Case, DType, ops::cpu::Isa>> {};

TEST_P(AttentionFast, MatchesReference) {
  const auto [c, dt, isa] = GetParam();
  test::IsaScope scope(isa);
  Tensor q = random_tensor({c.n_q, c.n_heads, c.head_dim}, DType::kF32, 31, 2.0f);
  Tensor k = random_tensor({c.n_kv, c.n_kv_heads, c.head_dim}, dt, 32, 2.0f);
  Tensor v = random_tensor({c.n_kv, c.n_kv_heads, c.head_dim}, dt, 33);
  const auto kp = iota(c.n_kv, 0), qp = iota(c.n_q, static_cast<int32_t>(c.n_kv - c.n_q));
  const ops::AttentionParams p{1.0f / std::sqrt(float(c.head_dim)), c.softcap, c.window};
  Tensor out = Tensor::empty(q.shape(), DType::kF32), ref = Tensor::empty(q.shape(), DType::kF32);
  ops::attention(q, k, v, qp, kp, p, out);
  ops::ref::attention(q, k, v, qp, kp, p, ref);
  EXPECT_LT(max_rel_error(to_vector(out), to_vector(ref)), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AttentionFast,
    ::testing::Combine(
        ::testing::Values(Case{1, 1, 2, 1, 7, 0, 0},         // one key
                          Case{17, 17, 4, 4, 33, 0, 0},      // causal prefill, odd head_dim
                          Case{1, 129, 14, 2, 64, 0, 0},     // decode, GQA 7
                          Case{3, 100, 6, 3, 17, 0, 50.0f},  // softcap
                          Case{20, 70, 8, 2, 64, 16, 0},     // sliding window shorter than prompt
                          Case{5, 200, 4, 1, 128, 33, 30.0f}),
        ::testing::Values(DType::kF32, DType::kBF16, DType::kF16),
        ::testing::ValuesIn(test::available_isas())));

// One query attended alone equals the same query among 19 others, equals it
// with only the keys up to its position (later keys are masked anyway), for
// every thread count.
TEST(AttentionDeterminism, QueryIndependentOfBatchKeysAndThreads) {
  const int64_t n_kv = 150, heads = 4, kv_heads = 2, hd = 40;
  for (int32_t window : {0, 37}) {
    Tensor q = random_tensor({20, heads, hd}, DType::kF32, 41, 3.0f);
    Tensor k = random_tensor({n_kv, kv_heads, hd}, DType::kBF16, 42, 3.0f);
    Tensor v = random_tensor({n_kv, kv_heads, hd}, DType::kBF16, 43);
    const auto kp = iota(n_kv, 0), qp = iota(20, static_cast<int32_t>(n_kv - 20));
    const ops::AttentionParams p{0.2f, 0.0f, window};
    Tensor batch = Tensor::empty(q.shape(), DType::kF32);
    ThreadPool::set_global_threads(2);
    ops::attention(q, k, v, qp, kp, p, batch);
    for (int threads : {1, 2, 3}) {
      ThreadPool::set_global_threads(threads);
      for (int64_t t : {0, 7, 19}) {
        Tensor one = Tensor::empty({1, heads, hd}, DType::kF32);
        const std::span<const int32_t> qpos(&qp[static_cast<size_t>(t)], 1);
        ops::attention(q.slice_rows(t, t + 1), k, v, qpos, kp, p, one);
        EXPECT_TRUE(bit_equal(one, batch.slice_rows(t, t + 1))) << "t " << t;
        const int64_t seen = qp[static_cast<size_t>(t)] + 1;  // keys [0, pos]: a cache mid-prompt
        Tensor prefix = Tensor::empty({1, heads, hd}, DType::kF32);
        ops::attention(q.slice_rows(t, t + 1), k.slice_rows(0, seen), v.slice_rows(0, seen), qpos,
                       std::span<const int32_t>(kp.data(), static_cast<size_t>(seen)), p, prefix);
        EXPECT_TRUE(bit_equal(prefix, one)) << "t " << t << " window " << window;
      }
    }
  }
  ThreadPool::set_global_threads(0);
}

TEST(AttentionFast, QueryWithoutVisibleKeysGetsZeros) {
  Tensor q = random_tensor({2, 2, 8}, DType::kF32, 1);
  Tensor k = random_tensor({3, 1, 8}, DType::kF32, 2);
  Tensor out = random_tensor({2, 2, 8}, DType::kF32, 3);
  std::vector<int32_t> qp = {0, 9}, kp = {5, 6, 7};
  ops::attention(q, k, k, qp, kp, {1.0f, 0.0f, 2}, out);  // q0 before all keys; q1 past the window
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out.data<float>()[i], 0.0f);
}

}  // namespace
}  // namespace cairn
