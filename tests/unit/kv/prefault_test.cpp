// prefault_async: host memory faulted in on the background thread, its contents untouched,
// the storage kept alive until done; PagePool's unzeroed pages (a restore's) are queued.
#include "kv/prefault.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "kv/host_slabs.h"
#include "kv/page_pool.h"

namespace cairn {
namespace {

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

// Of the whole 4 KiB pages in [data, data + size): how many are resident, of how many.
std::pair<size_t, size_t> resident(const void* data, size_t size) {
  const auto begin = (reinterpret_cast<uintptr_t>(data) + kPage - 1) / kPage * kPage;
  const auto end = (reinterpret_cast<uintptr_t>(data) + size) / kPage * kPage;
  const size_t n = (end - begin) / kPage;
  std::vector<unsigned char> in(n);
  EXPECT_EQ(::mincore(reinterpret_cast<void*>(begin), end - begin, in.data()), 0);
  size_t r = 0;
  for (unsigned char c : in) r += c & 1;
  return {r, n};
}

// Whether this kernel has MADV_POPULATE_WRITE (Linux 5.14).
bool kernel_populates() {
  void* p = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  const bool ok = ::madvise(p, kPage, 23 /* MADV_POPULATE_WRITE */) == 0;
  ::munmap(p, kPage);
  return ok;
}

TEST(Prefault, FaultsInFreshMemoryAndLeavesItsBytes) {
  if (!kernel_populates()) GTEST_SKIP() << "no MADV_POPULATE_WRITE (Linux < 5.14)";
  HostSlabs slabs(64 * 4096);
  std::shared_ptr<Storage> page = slabs.allocate();
  const auto [before, n] = resident(page->data(), page->size_bytes());
  EXPECT_LT(before, n) << "a fresh slab's page is not all resident yet";
  auto* bytes = static_cast<uint8_t*>(page->data());
  std::memset(bytes, 0x5a, 4 * kPage);  // written before: must survive
  prefault_async(page);
  prefault_drain();
  EXPECT_EQ(resident(page->data(), page->size_bytes()).first, n);
  for (size_t i = 0; i < 4 * kPage; ++i) ASSERT_EQ(bytes[i], 0x5a) << i;
  for (size_t i = 4 * kPage; i < page->size_bytes(); i += 997) ASSERT_EQ(bytes[i], 0) << i;
}

TEST(Prefault, KeepsTheStorageUntilDone) {
  HostSlabs slabs(16 * 4096);
  std::shared_ptr<Storage> page = slabs.allocate();
  const void* slot = page->data();
  prefault_async(std::move(page));  // the only reference: held by the queue until done
  prefault_drain();
  EXPECT_EQ(slabs.allocate()->data(), slot) << "the slot came back once the prefault ended";
}

TEST(Prefault, UnzeroedPoolPagesAreQueued) {
  if (!kernel_populates()) GTEST_SKIP() << "no MADV_POPULATE_WRITE (Linux < 5.14)";
  const int64_t bytes = 48 * 4096;
  PagePool pool(64 * bytes);
  const int32_t arena = pool.add_arena(bytes, "test");
  const std::vector<int32_t> ids = pool.allocate(arena, 3, false);
  prefault_drain();
  for (int32_t id : ids) {
    const auto [r, n] = resident(pool.data(arena, id), static_cast<size_t>(bytes));
    EXPECT_EQ(r, n) << "page " << id;
  }
}

}  // namespace
}  // namespace cairn
