// split_columns on the CPU: each part gets its columns of every row; and its checks.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace cairn
