// Tensor maps (tensor_map.h): a map from the cache is byte for byte the one the driver
// encodes for the same inputs, a different box or shape is another map, and past the
// cache's size every answer is still the encoder's own. The wgmma tiles' results over
// these maps are tested in matmul_test.cpp (EveryTileGivesTheSameBits).
#include <gtest/gtest.h>

#include <cstring>

#include "backend/cuda/tensor_map.h"
#include "backend/device.h"
#include "gpu_test_util.h"

namespace cairn {
namespace {

bool same_map(const CUtensorMap& a, const CUtensorMap& b) {
  return std::memcmp(&a, &b, sizeof(CUtensorMap)) == 0;
}

TEST(TensorMap, ACachedMapIsTheEncodersOwn) {
  CAIRN_NEED_GPU();
  Tensor w = empty_on(Device{DeviceKind::kCuda, 0}, {256, 512}, DType::kBF16);
  const void* p = w.raw();
  const CUtensorMap first = cuda::tile_map_128b(p, 256, 512, 64, true);
  EXPECT_TRUE(same_map(first, cuda::encode_tile_map_128b(p, 256, 512, 64, true)));
  EXPECT_TRUE(same_map(cuda::tile_map_128b(p, 256, 512, 64, true), first));    // from the cache
  EXPECT_FALSE(same_map(cuda::tile_map_128b(p, 256, 512, 32, true), first));   // another box
  EXPECT_FALSE(same_map(cuda::tile_map_128b(p, 128, 512, 64, true), first));   // fewer rows
  EXPECT_FALSE(same_map(cuda::tile_map_128b(p, 256, 512, 64, false), first));  // f16
}

TEST(TensorMap, PastTheCachesSizeEveryMapIsStillRight) {
  CAIRN_NEED_GPU();
  Tensor w = empty_on(Device{DeviceKind::kCuda, 0}, {8192, 64}, DType::kBF16);
  const auto* p = static_cast<const uint8_t*>(w.raw());
  for (int64_t i = 0; i < 5000; ++i) {
    const int64_t rows = 1 + i % 4096;
    const void* at = p + (i / 4096) * 128;  // 16-byte aligned starts
    const CUtensorMap got = cuda::tile_map_128b(at, rows, 64, 32, true);
    ASSERT_TRUE(same_map(got, cuda::encode_tile_map_128b(at, rows, 64, 32, true))) << i;
  }
}

}  // namespace
}  // namespace cairn
