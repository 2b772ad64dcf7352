// The GPU op tests' own helpers that need no GPU: the benchmarks' size lists from the
// environment (sizes_from_env).
#include <gtest/gtest.h>

#include <cstdlib>
#include <utility>
#include <vector>

#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

using Sizes = std::vector<std::pair<int64_t, int64_t>>;

TEST(GpuTestUtil, SizesFromEnvReadsTheListUpToItsFirstBadItem) {
  const char* name = "CAIRN_TEST_SIZES_FROM_ENV";
  unsetenv(name);
  EXPECT_EQ(sizes_from_env(name, {{1, 2}}), (Sizes{{1, 2}}));
  setenv(name, "128x512,64x4096", 1);
  EXPECT_EQ(sizes_from_env(name, {{1, 2}}), (Sizes{{128, 512}, {64, 4096}}));
  setenv(name, "24576x4096,oops,8x8", 1);
  EXPECT_EQ(sizes_from_env(name, {}), (Sizes{{24576, 4096}}));
  setenv(name, "1", 1);
  EXPECT_TRUE(sizes_from_env(name, {{1, 2}}).empty());
  unsetenv(name);
}

}  // namespace
}  // namespace cairn::gpu_test
