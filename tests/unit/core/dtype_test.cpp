#include "core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace cairn {
namespace {

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  // 1 + 2^-8 is exactly halfway between two bf16 values: ties go to even (1.0).
  EXPECT_EQ(f32_to_bf16(1.00390625f), 0x3f80);
  // 1 + 3·2^-8 is halfway too, and rounds up to the even neighbour.
  EXPECT_EQ(f32_to_bf16(1.01171875f), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
}

TEST(DType, F16RoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    uint16_t bits = static_cast<uint16_t>(h);
    float f = f16_to_f32(bits);
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16(f), bits) << "half bits " << h << " value " << f;
  }
}

TEST(DType, F16MatchesKnownValues) {
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(f32_to_f16(1e-8f), 0x0000);
}

TEST(DType, F16ConversionErrorIsBounded) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-60000.0f, 60000.0f);
  for (int i = 0; i < 10000; ++i) {
    float x = dist(rng);
    float y = f16_to_f32(f32_to_f16(x));
    EXPECT_LE(std::fabs(x - y), std::fabs(x) * (1.0f / 2048.0f) + 1e-7f) << x;
  }
}

TEST(DType, BytesOfPackedTypes) {
  EXPECT_EQ(dtype_bytes(DType::kQ4, 7), 4u);
  EXPECT_EQ(dtype_bytes(DType::kBF16, 3), 6u);
  DType t;
  EXPECT_TRUE(dtype_from_name("bf16", &t));
  EXPECT_EQ(t, DType::kBF16);
  EXPECT_FALSE(dtype_from_name("f64", &t));
}

}  // namespace
}  // namespace cairn
