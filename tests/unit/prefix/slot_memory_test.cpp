// Slot memory: slots aligned as asked whatever the allocator gives, cut from
// shared chunks per size, reused once released, and valid past the memory's
// own life while a buffer is held.
#include "prefix/slot_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "core/error.h"

namespace cairn::test {
namespace {

bool aligned(const uint8_t* p, size_t a) {
  return reinterpret_cast<uintptr_t>(p) % a == 0;
}

// An allocator whose memory starts 8 bytes past a 64-byte boundary.
SlotMemory::Allocate shifted_allocator(int* calls) {
  return [calls](size_t n) {
    ++*calls;
    auto block = allocate_host(n + 8);
    struct Shifted final : Storage {
      Shifted(std::shared_ptr<Storage> b, size_t n)
          : Storage(static_cast<uint8_t*>(b->data()) + 8, n, Device::cpu()), block(std::move(b)) {}
      std::shared_ptr<Storage> block;
    };
    return std::make_shared<Shifted>(std::move(block), n);
  };
}

TEST(SlotMemory, SlotsStartAlignedWhateverTheAllocatorGives) {
  int calls = 0;
  SlotMemory m(shifted_allocator(&calls), 4096, size_t{1} << 20);
  std::vector<std::shared_ptr<uint8_t>> held;
  for (int i = 0; i < 5; ++i) {
    held.push_back(m.buffer(100000));  // slots of 102400 bytes: 10 a chunk
    EXPECT_TRUE(aligned(held.back().get(), 4096)) << i;
    std::memset(held.back().get(), i, 100000);  // the slot's bytes are its own
  }
  EXPECT_EQ(calls, 2);  // the first chunk was misaligned: asked again, larger
  EXPECT_EQ(m.allocated_bytes(), int64_t{10 * 102400 + 4095});  // the chunk kept
  std::set<uint8_t*> distinct;
  for (const auto& b : held) distinct.insert(b.get());
  EXPECT_EQ(distinct.size(), held.size());
}

TEST(SlotMemory, AReleasedSlotIsTheNextBufferOfItsSize) {
  int calls = 0;
  SlotMemory m(
      [&calls](size_t n) {
        ++calls;
        return allocate_host(n);
      },
      64, size_t{1} << 16);
  uint8_t* first = nullptr;
  {
    const auto b = m.buffer(1000);
    first = b.get();
  }
  EXPECT_EQ(m.buffer(1000).get(), first);
  EXPECT_EQ(m.buffer(1024).get(), first);  // the same slot size
  const auto other = m.buffer(5000);       // another size: its own chunk
  EXPECT_NE(other.get(), first);
  EXPECT_EQ(calls, 2);
}

TEST(SlotMemory, ABufferOutlivesTheMemory) {
  std::shared_ptr<uint8_t> kept;
  {
    SlotMemory m([](size_t n) { return allocate_host(n); }, 256);
    kept = m.buffer(4000);
  }
  std::memset(kept.get(), 7, 4000);  // still the chunk's memory
  EXPECT_EQ(kept.get()[3999], 7);
  kept.reset();  // goes back to a free list nobody else holds
}

TEST(SlotMemory, AnAlignmentThatIsNotAPowerOfTwoIsRefused) {
  EXPECT_THROW(SlotMemory([](size_t n) { return allocate_host(n); }, 3000), Error);
}

}  // namespace
}  // namespace cairn::test
