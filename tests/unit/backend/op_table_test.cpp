// Dispatch through the op table and argument checking in the free functions.
#include <gtest/gtest.h>

#include "../../ops/cpu/op_test_util.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/op_table.h"
#include "core/error.h"
#include "expect_invalid.h"

namespace cairn {
namespace {

using test::expect_invalid;

using test::random_tensor;

TEST(OpTable, CpuIsRegisteredAndCompleteCudaOnlyInACudaBuild) {
  const ops::OpTable& t = ops::op_table(DeviceKind::kCpu);
  EXPECT_NE(t.matmul, nullptr);
  EXPECT_NE(t.convert, nullptr);
  if (CAIRN_TEST_CUDA_BUILT) {  // registered without a GPU: registering launches nothing
    EXPECT_NE(ops::op_table(DeviceKind::kCuda).matmul, nullptr);
    return;
  }
  try {
    ops::op_table(DeviceKind::kCuda);
    ADD_FAILURE() << "cuda table present in a CPU build";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  }
}

TEST(OpTable, ReferenceTableCanBeSwappedIn) {
  Tensor x = random_tensor({2, 7}, DType::kF32, 1);
  Tensor w = random_tensor({3, 7}, DType::kBF16, 2);
  Tensor y_fast = Tensor::empty({2, 3}, DType::kF32), y_ref = Tensor::empty({2, 3}, DType::kF32);
  ops::matmul(x, w, nullptr, y_fast);
  ops::cpu::use_reference_ops(true);
  EXPECT_EQ(ops::op_table(DeviceKind::kCpu).matmul, ops::cpu::reference_table().matmul);
  ops::matmul(x, w, nullptr, y_ref);
  ops::cpu::use_reference_ops(false);
  EXPECT_EQ(ops::op_table(DeviceKind::kCpu).matmul, ops::cpu::fast_table().matmul);
  EXPECT_LT(test::max_rel_error(test::to_vector(y_fast), test::to_vector(y_ref)), 1e-5);
}

TEST(OpArgs, MatmulShapesAreChecked) {
  Tensor x = random_tensor({2, 7}, DType::kF32, 1);
  Tensor w = random_tensor({3, 8}, DType::kF32, 2);
  Tensor y = Tensor::empty({2, 3}, DType::kF32);
  expect_invalid([&] { ops::matmul(x, w, nullptr, y); }, "k");
  Tensor w2 = random_tensor({3, 7}, DType::kF32, 2);
  Tensor y_bad = Tensor::empty({2, 4}, DType::kF32);
  expect_invalid([&] { ops::matmul(x, w2, nullptr, y_bad); }, "rows of w");
  Tensor bias = Tensor::empty({4}, DType::kF32);
  expect_invalid([&] { ops::matmul(x, w2, &bias, y); }, "bias");
  Tensor x_bf16 = random_tensor({2, 7}, DType::kBF16, 1);
  expect_invalid([&] { ops::matmul(x_bf16, w2, nullptr, y); }, "x");
  Tensor w_i32 = Tensor::zeros({3, 7}, DType::kI32);
  expect_invalid([&] { ops::matmul(x, w_i32, nullptr, y); }, "w");
}

TEST(OpArgs, EmbeddingIdOutOfRangeIsAnError) {
  Tensor table = random_tensor({10, 4}, DType::kBF16, 1);
  Tensor y = Tensor::empty({2, 4}, DType::kF32);
  std::vector<int32_t> ids = {3, 10};
  expect_invalid([&] { ops::embedding(table, ids, y); }, "id 10");
  ids = {-1, 0};
  expect_invalid([&] { ops::embedding(table, ids, y); }, "id -1");
  ids = {1};
  expect_invalid([&] { ops::embedding(table, ids, y); }, "number of ids");
}

TEST(OpArgs, NormRopeAttentionAndElementwiseShapes) {
  Tensor x = random_tensor({2, 8}, DType::kF32, 1);
  Tensor w = random_tensor({7}, DType::kF32, 2);
  expect_invalid([&] { ops::rms_norm(x, w, 1e-5f, x); }, "w length");
  Tensor x3 = random_tensor({2, 2, 8}, DType::kF32, 3);
  std::vector<float> inv(4, 1.0f);
  std::vector<int32_t> pos = {0, 1};
  expect_invalid([&] { ops::rope(x3, pos, {inv, 10, ops::RopeLayout::kHalfSplit}); }, "rotary_dim");
  expect_invalid([&] { ops::rope(x3, pos, {inv, 6, ops::RopeLayout::kHalfSplit}); }, "inv_freq");
  Tensor k = random_tensor({2, 3, 8}, DType::kF32, 4);
  Tensor out = Tensor::empty(x3.shape(), DType::kF32);
  expect_invalid([&] { ops::attention(x3, k, k, pos, pos, {}, out); }, "multiple");
  Tensor y = Tensor::empty({2, 7}, DType::kF32);
  expect_invalid([&] { ops::add(x, x, y); }, "differ");
  expect_invalid([&] { ops::softmax(x, y); }, "differ");
  expect_invalid([&] { ops::softcap(x, 0.0f); }, "cap");
}

}  // namespace
}  // namespace cairn
