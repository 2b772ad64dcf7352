#include <gtest/gtest.h>

#include "core/error.h"
#include "kv/page_meta.h"
#include "kv/page_pool.h"

namespace cairn::test {
namespace {

TEST(PageMeta, AllocateRetainRelease) {
  PageMeta m(4);
  EXPECT_TRUE(m.can_allocate(4));
  EXPECT_FALSE(m.can_allocate(5));
  std::vector<int32_t> a = m.allocate(3);
  EXPECT_EQ(a, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(m.n_free(), 1);
  m.retain(1);
  EXPECT_EQ(m.ref_count(1), 2);
  EXPECT_FALSE(m.release(1));
  EXPECT_TRUE(m.release(1));
  EXPECT_EQ(m.ref_count(1), 0);
  EXPECT_EQ(m.allocate(1), std::vector<int32_t>{1});  // LIFO: the last freed comes back first
  m.set_key(0, {7, 9});
  EXPECT_EQ(m.key(0), (PageKey{7, 9}));
  EXPECT_TRUE(m.release(0));
  EXPECT_TRUE(m.key(0).empty());
}

TEST(PageMeta, PreconditionsAreChecked) {
  PageMeta m(2);
  EXPECT_THROW(m.allocate(3), Error);
  EXPECT_THROW(m.retain(0), Error);   // free
  EXPECT_THROW(m.release(1), Error);  // free
  EXPECT_THROW(m.ref_count(2), Error);
  EXPECT_THROW(m.set_key(0, {1, 1}), Error);
  EXPECT_EQ(m.n_free(), 2);  // a failed call changed nothing
}

TEST(PagePool, BudgetCountsLivePagesOnly) {
  PagePool pool(1000);
  const int32_t big = pool.add_arena(300, "big"), small = pool.add_arena(100, "small");
  EXPECT_TRUE(pool.can_allocate(big, 3));
  EXPECT_FALSE(pool.can_allocate(big, 4));
  std::vector<int32_t> b = pool.allocate(big, 3);
  EXPECT_EQ(pool.used_bytes(), 900);
  EXPECT_TRUE(pool.can_allocate(small, 1));
  EXPECT_FALSE(pool.can_allocate(small, 2));
  try {
    pool.allocate(small, 2);
    FAIL() << "expected kOutOfMemory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory);
  }
  pool.retain(big, b[0]);
  pool.release(big, b[0]);
  EXPECT_EQ(pool.used_bytes(), 900);  // still referenced
  for (int32_t id : b) pool.release(big, id);
  EXPECT_EQ(pool.used_bytes(), 0);
  EXPECT_EQ(pool.allocate(small, 10).size(), 10u);  // the freed bytes serve another format
  EXPECT_EQ(pool.n_used_pages(), 10);
  EXPECT_EQ(pool.data(small, 0)[99], 0);  // zero-filled
}

// Page bytes move through write, copy_page and read (what the tiers use, on any device).
TEST(PagePool, WriteCopyReadMovePageBytes) {
  PagePool pool(4096);
  const int32_t a = pool.add_arena(64, "a");
  const std::vector<int32_t> ids = pool.allocate(a, 2);
  std::vector<uint8_t> bytes(64), back(64, 0xEE);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(3 * i + 1);
  pool.write(a, ids[0], bytes);
  pool.copy_page(a, ids[0], ids[1]);
  pool.read(a, ids[1], back);
  EXPECT_EQ(back, bytes);
  const Tensor view = pool.view(a, ids[1], 60, {4}, DType::kU8);
  EXPECT_EQ(view.data<uint8_t>()[0], bytes[60]);
  std::vector<uint8_t> short_buf(63);
  EXPECT_THROW(pool.read(a, ids[0], short_buf), Error);
}

}  // namespace
}  // namespace cairn::test
