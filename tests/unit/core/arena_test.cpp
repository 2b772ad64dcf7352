#include "core/arena.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace cairn {
namespace {

TEST(Arena, AddressesAreStableAcrossResets) {
  Arena arena(1 << 16);
  Tensor a = arena.allocate({16, 16}, DType::kF32);
  Tensor b = arena.allocate({3}, DType::kBF16);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.raw()) % 64, 0u);
  void* first = a.raw();
  arena.reset();
  Tensor a2 = arena.allocate({16, 16}, DType::kF32);
  EXPECT_EQ(a2.raw(), first);
  EXPECT_GE(arena.high_water_bytes(), 16u * 16u * 4u + 6u);
}

TEST(Arena, OverflowIsOutOfMemory) {
  Arena arena(1024);
  try {
    arena.allocate({1024}, DType::kF32);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory);
  }
}

}  // namespace
}  // namespace cairn
