// HostSlabs: pages cut from huge-page slabs, reused once released, alive as long
// as any page is held.
#include "kv/host_slabs.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "kv/page_pool.h"

namespace cairn {
namespace {

TEST(HostSlabs, PagesAreDistinctAlignedAndWritable) {
  HostSlabs slabs(393'216 + 5);  // not a multiple of 64
  std::vector<std::shared_ptr<Storage>> pages;
  std::set<uint8_t*> starts;
  for (int i = 0; i < 3 * slabs.pages_per_slab() + 1; ++i) {
    pages.push_back(slabs.allocate());
    auto* p = static_cast<uint8_t*>(pages.back()->data());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    EXPECT_EQ(pages.back()->size_bytes(), 393'216u + 5);
    std::memset(p, i & 0xff, pages.back()->size_bytes());
    starts.insert(p);
  }
  EXPECT_EQ(starts.size(), pages.size());
  EXPECT_EQ(slabs.n_slabs(), 4);
  for (size_t i = 0; i < pages.size(); ++i) {  // no page wrote over another
    const auto* p = static_cast<const uint8_t*>(pages[i]->data());
    EXPECT_EQ(p[0], i & 0xff);
    EXPECT_EQ(p[pages[i]->size_bytes() - 1], i & 0xff);
  }
}

TEST(HostSlabs, ReleasedSlotIsReusedBeforeANewSlab) {
  HostSlabs slabs(4096);
  std::vector<std::shared_ptr<Storage>> pages;
  for (int64_t i = 0; i < slabs.pages_per_slab(); ++i) pages.push_back(slabs.allocate());
  void* freed = pages[7]->data();
  pages[7].reset();
  EXPECT_EQ(slabs.allocate()->data(), freed);  // returned again when this one goes
  pages[7] = slabs.allocate();
  EXPECT_EQ(pages[7]->data(), freed);
  EXPECT_EQ(slabs.n_slabs(), 1);
  pages.push_back(slabs.allocate());
  EXPECT_EQ(slabs.n_slabs(), 2);
}

TEST(HostSlabs, APageOutlivesItsAllocator) {
  std::shared_ptr<Storage> page;
  {
    HostSlabs slabs(1000);
    page = slabs.allocate();
  }
  std::memset(page->data(), 0x5a, page->size_bytes());  // still mapped (ASan: no fault)
  EXPECT_EQ(static_cast<const uint8_t*>(page->data())[999], 0x5a);
}

#if defined(__SANITIZE_ADDRESS__)
// Slabs keep AddressSanitizer's reach: a byte past a page, or a released page, is reported.
TEST(HostSlabsDeathTest, OverrunAndUseAfterReleaseAreReported) {
  HostSlabs slabs(4096);
  std::shared_ptr<Storage> page = slabs.allocate();
  auto* p = static_cast<volatile uint8_t*>(page->data());
  EXPECT_DEATH(p[4096] = 1, "AddressSanitizer");
  page.reset();
  EXPECT_DEATH(p[0] = 1, "AddressSanitizer");
}
#endif

// A host pool's pages come zeroed even when their slot held another page's bytes, unless the
// allocation asks for them as they are (a restore's spare, written whole before it is read);
// such a page released unwritten does not hand its bytes to the next zeroed allocation.
TEST(PagePool, ReusedHostPagesAreZeroedUnlessAskedNot) {
  PagePool pool(1 << 20);
  const int32_t arena = pool.add_arena(3000, "a");
  auto dirty_then_release = [&](int32_t page) {
    std::memset(pool.data(arena, page), 0xab, 3000);
    pool.release(arena, page);
  };
  auto expect_zeroed = [&](int32_t page) {
    const uint8_t* p = pool.data(arena, page);
    for (int i = 0; i < 3000; ++i) ASSERT_EQ(p[i], 0) << "byte " << i;
  };
  dirty_then_release(pool.allocate_one(arena));
  const int32_t zeroed = pool.allocate_one(arena);  // the same slot
  expect_zeroed(zeroed);
  dirty_then_release(zeroed);
  const int32_t spare = pool.allocate_one(arena, false);  // the same slot, bytes as they are
  EXPECT_EQ(pool.data(arena, spare)[0], 0xab);
  pool.release(arena, spare);
  expect_zeroed(pool.allocate_one(arena));
}

}  // namespace
}  // namespace cairn
