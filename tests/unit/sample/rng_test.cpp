#include "sample/rng.h"

#include <gtest/gtest.h>

#include <cmath>

namespace cairn {
namespace {

// Known-answer vectors published with the Philox4x32-10 definition.
TEST(Philox, KnownAnswers) {
  auto zero = philox4x32(0, 0, 0);
  EXPECT_EQ(zero[0], 0x6627e8d5u);
  EXPECT_EQ(zero[1], 0xe169c58du);
  EXPECT_EQ(zero[2], 0xbc57ac4cu);
  EXPECT_EQ(zero[3], 0x9b00dbd8u);
  auto ones = philox4x32(~0ull, ~0ull, ~0ull);
  EXPECT_EQ(ones[0], 0x408f276du);
  EXPECT_EQ(ones[1], 0x41c83b0eu);
  EXPECT_EQ(ones[2], 0xa20bc7c6u);
  EXPECT_EQ(ones[3], 0x6d5451fdu);
}

TEST(Philox, UniformIsInRangeAndRoughlyFlat) {
  double sum = 0.0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    float u = uniform_at(42, static_cast<uint64_t>(i));
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_NE(uniform_at(1, 5), uniform_at(2, 5));
  EXPECT_EQ(uniform_at(1, 5), uniform_at(1, 5));
}

}  // namespace
}  // namespace cairn
