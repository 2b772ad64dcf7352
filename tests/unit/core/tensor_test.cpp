#include "core/tensor.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace cairn {
namespace {

TEST(Tensor, ViewsShareStorage) {
  Tensor t = Tensor::empty({4, 3}, DType::kF32);
  for (int i = 0; i < 12; ++i) t.data<float>()[i] = static_cast<float>(i);
  Tensor r = t.row(2);
  ASSERT_EQ(r.ndim(), 1);
  EXPECT_EQ(r.dim(0), 3);
  EXPECT_EQ(r.data<float>()[0], 6.0f);
  Tensor s = t.slice_rows(1, 3);
  EXPECT_EQ(s.shape(), Shape({2, 3}));
  s.data<float>()[0] = 42.0f;
  EXPECT_EQ(t.data<float>()[3], 42.0f);
  Tensor flat = t.reshape({12});
  EXPECT_EQ(flat.data<float>()[3], 42.0f);
}

TEST(Tensor, BadReshapeIsAnError) {
  Tensor t = Tensor::empty({4, 3}, DType::kF32);
  EXPECT_THROW(t.reshape({5, 3}), Error);
  EXPECT_THROW(t.slice_rows(3, 5), Error);
}

TEST(Tensor, DescribeAndBytes) {
  Tensor t = Tensor::zeros({2, 5}, DType::kBF16);
  EXPECT_EQ(t.describe(), "bf16[2, 5]");
  EXPECT_EQ(t.nbytes(), 20u);
  EXPECT_TRUE(t.is_contiguous());
}

}  // namespace
}  // namespace cairn
