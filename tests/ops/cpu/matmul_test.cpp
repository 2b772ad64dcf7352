// Matmul fast paths: against the reference within the f32 bound on awkward
// sizes, each vector kernel bit-identical to its portable lane emulation, and
// every row independent of the row count and the thread count.
#include <gtest/gtest.h>

#include <tuple>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/fast/fast.h"
#include "backend/ops.h"
#include "core/thread_pool.h"
#include "op_test_util.h"

namespace cairn {
namespace {

using test::bit_equal;
using test::max_rel_error;
using test::random_tensor;
using test::to_vector;

// (k, n, w dtype)
class MatmulFast : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, DType>> {};

TEST_P(MatmulFast, MatchesReference) {
  const auto [k, n, dt] = GetParam();
  for (int64_t m : {1, 5, 67}) {
    const auto seed = static_cast<uint32_t>(k * 1000 + n * 10 + m);
    Tensor x = random_tensor({n, k}, DType::kF32, seed);
    Tensor w = random_tensor({m, k}, dt, seed + 1);
    Tensor bias = random_tensor({m}, DType::kF32, seed + 2);
    for (const Tensor* b :
         {static_cast<const Tensor*>(nullptr), static_cast<const Tensor*>(&bias)}) {
      Tensor y = Tensor::empty({n, m}, DType::kF32), y_ref = Tensor::empty({n, m}, DType::kF32);
      ops::matmul(x, w, b, y);
      ops::ref::matmul(x, w, b, y_ref);
      EXPECT_LT(max_rel_error(to_vector(y), to_vector(y_ref)), 1e-5)
          << "m " << m << " bias " << (b != nullptr);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, MatmulFast,
    ::testing::Combine(::testing::Values(1, 7, 33, 129, 1000), ::testing::Values(1, 3, 17),
                       ::testing::Values(DType::kF32, DType::kBF16, DType::kF16)));

TEST(MatmulFast, EmptyReductionGivesBias) {
  for (int64_t n : {1, 5}) {
    Tensor x = Tensor::empty({n, 0}, DType::kF32), w = Tensor::empty({3, 0}, DType::kBF16);
    Tensor bias = random_tensor({3}, DType::kF32, 1);
    Tensor y = random_tensor({n, 3}, DType::kF32, 2);
    ops::matmul(x, w, &bias, y);
    for (int64_t i = 0; i < n * 3; ++i) EXPECT_EQ(y.data<float>()[i], bias.data<float>()[i % 3]);
  }
}

// Every kernel the processor can run equals its portable emulation bit for bit.
TEST(MatmulKernels, VectorKernelsEqualTheirLaneEmulation) {
  const ops::cpu::Isa have = ops::cpu::detected_isa();
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16})
    for (int64_t n : {1, 5, 40}) {
      Tensor x = random_tensor({n, 1000}, DType::kF32, 7);
      Tensor w = random_tensor({37, 1000}, dt, 8);
      Tensor bias = random_tensor({37}, DType::kF32, 9);
      Tensor y8 = Tensor::empty({n, 37}, DType::kF32), y16 = Tensor::empty({n, 37}, DType::kF32);
      Tensor y = Tensor::empty({n, 37}, DType::kF32);
      ops::fast::run_matmul_cols(ops::fast::matmul_args(x, w, &bias, y8),
                                 ops::fast::matmul_cols_scalar);
      ops::fast::run_matmul_cols(ops::fast::matmul_args(x, w, &bias, y16),
                                 ops::fast::matmul_cols_scalar16);
      if (have >= ops::cpu::Isa::kAvx2) {
        ops::fast::run_matmul_cols(ops::fast::matmul_args(x, w, &bias, y),
                                   ops::fast::matmul_cols_avx2);
        EXPECT_TRUE(bit_equal(y, y8)) << "avx2 " << dtype_name(dt) << " n " << n;
      }
      if (have >= ops::cpu::Isa::kAvx512) {
        ops::fast::run_matmul_cols(ops::fast::matmul_args(x, w, &bias, y),
                                   ops::fast::matmul_cols_avx512);
        EXPECT_TRUE(bit_equal(y, y16)) << "avx512 " << dtype_name(dt) << " n " << n;
      }
      Tensor y_ref = Tensor::empty({n, 37}, DType::kF32);
      ops::ref::matmul(x, w, &bias, y_ref);
      EXPECT_LT(max_rel_error(to_vector(y8), to_vector(y_ref)), 1e-5);
      EXPECT_LT(max_rel_error(to_vector(y16), to_vector(y_ref)), 1e-5);
    }
}

// Row i of y is the same bits whether x holds 1 row or many (GEMV vs blocked
// GEMM paths), whatever the thread count.
TEST(MatmulDeterminism, RowsIndependentOfBatchAndThreads) {
  for (DType dt : {DType::kF32, DType::kBF16}) {
    const int64_t k = 1000, m = 131;
    Tensor x = random_tensor({100, k}, DType::kF32, 11);
    Tensor w = random_tensor({m, k}, dt, 12);
    Tensor full = Tensor::empty({100, m}, DType::kF32);
    ThreadPool::set_global_threads(2);
    ops::matmul(x, w, nullptr, full);
    for (int threads : {1, 2, 3}) {
      ThreadPool::set_global_threads(threads);
      for (int64_t n : {1, 2, 4, 17, 64, 100}) {
        Tensor part = Tensor::empty({n, m}, DType::kF32);
        ops::matmul(x.slice_rows(0, n), w, nullptr, part);
        EXPECT_TRUE(bit_equal(part, full.slice_rows(0, n)))
            << dtype_name(dt) << " n " << n << " threads " << threads;
      }
      Tensor last = Tensor::empty({1, m}, DType::kF32);
      ops::matmul(x.slice_rows(99, 100), w, nullptr, last);
      EXPECT_TRUE(bit_equal(last, full.slice_rows(99, 100))) << "threads " << threads;
    }
  }
  ThreadPool::set_global_threads(0);
}

}  // namespace
}  // namespace cairn
