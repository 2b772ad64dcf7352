// CUDA convert_rows (the KV append of many sequences in one launch) against convert per row
// block, bit for bit: rows between f32, bf16 and f16 caches, NaNs and infinities included.
// Outputs poisoned.
#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <vector>

#include "backend/ops.h"
#include "gpu_test_util.h"
#include "row_test_util.h"

namespace cairn::gpu_test {
namespace {

// A batch's rows appended into three poisoned caches (one twice, one copy of 600
// rows spanning many thread blocks, rows of 160 elements), against convert per
// row block into identically poisoned caches; NaNs and infinities included.
TEST(ConvertRowsGpu, EqualsConvertPerRowBlock) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(91);
  const DType kTypes[] = {DType::kF32, DType::kBF16, DType::kF16};
  for (DType from : kTypes)
    for (DType to : kTypes) {
      Tensor src_f = random_host({700, 2, 80}, DType::kF32, rng, 3.0f);
      src_f.data<float>()[5] = std::bit_cast<float>(0xffc00001u);  // NaN with a payload
      src_f.data<float>()[170] = std::bit_cast<float>(0x7f800000u);
      src_f.data<float>()[171] = 70000.0f;  // f16 overflow
      Tensor src_h = Tensor::empty(src_f.shape(), from);
      ops::convert(src_f, src_h);
      const Tensor src = to_device(src_h);
      std::vector<Tensor> got, want;
      for (int i = 0; i < 3; ++i) {
        got.push_back(poisoned_device({800, 2, 80}, to));
        want.push_back(poisoned_device({800, 2, 80}, to));
      }
      const std::vector<ops::RowCopy> copies = {
          {&src, 0, &got[1], 5, 1},     {&src, 1, &got[0], 0, 600},
          {&src, 601, &got[1], 6, 7},   {&src, 608, &got[2], 799, 1},
          {&src, 609, &got[2], 100, 0}, {&src, 609, &got[2], 300, 91}};
      ops::convert_rows(copies);
      for (const ops::RowCopy& c : copies) {
        if (c.n_rows == 0) continue;
        Tensor w = want[static_cast<size_t>(c.dst - got.data())].slice_rows(c.dst_row,
                                                                            c.dst_row + c.n_rows);
        ops::convert(src.slice_rows(c.src_row, c.src_row + c.n_rows), w);
      }
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_TRUE(bit_equal(to_host(got[i]), to_host(want[i])))
            << "cache " << i << ", " << dtype_name(from) << " -> " << dtype_name(to);
    }
}

}  // namespace
}  // namespace cairn::gpu_test
