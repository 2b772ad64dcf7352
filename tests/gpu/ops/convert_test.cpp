// CUDA convert against the CPU reference for every pair of f32, bf16 and f16,
// on random values and edge cases (NaNs with payloads, infinities, f16
// overflow and subnormals, halfway cases, -0): the device must write the same
// bytes as the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "backend/cpu/reference/reference.h"
#include "backend/ops.h"
#include "core/dtype.h"
#include "gpu_test_util.h"
#include "row_test_util.h"

namespace cairn::gpu_test {
namespace {

// f32 values that stress the conversions, by bit pattern.
const uint32_t kSpecialBits[] = {
    0x7fc00000u, 0xffc00001u, 0x7f800001u,  // quiet NaN, negative NaN with payload, signaling NaN
    0x7f800000u, 0xff800000u,               // ±inf
    0x477fe000u, 0x477ff000u, 0x477fefffu,  // 65504, 65520 (f16 inf), just under
    0x7f7fffffu, 0x7f7f8000u,               // f32 max, bf16 halfway to inf
    0x33000000u, 0x33000001u, 0x33800000u,  // f16 subnormal boundaries (2^-25, above, 2^-24)
    0x38800000u, 0x387fc000u,               // smallest f16 normal, largest subnormal
    0x3f808000u, 0x3f818000u,               // bf16 halfway cases (to even down, up)
    0x3f801000u, 0x3f803000u,               // f16 halfway cases
    0x80000000u, 0x00000001u, 0x00800000u,  // -0, f32 subnormal, smallest f32 normal
};

Tensor with_specials(int64_t n, DType dtype, std::mt19937& rng) {
  Tensor f = random_host({n}, DType::kF32, rng, 3.0f);
  const int64_t k = std::min<int64_t>(n, std::size(kSpecialBits));
  for (int64_t i = 0; i < k; ++i) f.data<float>()[i] = std::bit_cast<float>(kSpecialBits[i]);
  if (dtype == DType::kF32) return f;
  Tensor t = Tensor::empty({n}, dtype);
  ops::ref::convert(f, t);
  return t;
}

TEST(GpuConvert, EveryPairMatchesReferenceBitForBit) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(71);
  const DType kTypes[] = {DType::kF32, DType::kBF16, DType::kF16};
  for (DType from : kTypes)
    for (DType to : kTypes)
      for (int64_t n : {1, 3, 37, 1073, 4099}) {
        Tensor src = with_specials(n, from, rng);
        Tensor ref = Tensor::empty({n}, to);
        ops::ref::convert(src, ref);
        Tensor dst = poisoned_device({n}, to);
        ops::convert(to_device(src), dst);
        EXPECT_TRUE(bit_equal(to_host(dst), ref))
            << dtype_name(from) << " -> " << dtype_name(to) << " n " << n;
      }
}

TEST(GpuConvert, MultiDimensionalShape) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(72);
  Tensor src = random_host({3, 5, 7}, DType::kBF16, rng);
  Tensor ref = Tensor::empty(src.shape(), DType::kF32);
  ops::ref::convert(src, ref);
  Tensor dst = poisoned_device(src.shape(), DType::kF32);
  ops::convert(to_device(src), dst);
  Tensor got = to_host(dst);
  EXPECT_LE(rel_error(got, ref), 1e-5);
  EXPECT_TRUE(bit_equal(got, ref));
}

}  // namespace
}  // namespace cairn::gpu_test
