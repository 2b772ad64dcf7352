// Restores on worker threads: a chain's pages arrive verified, a failing page
// ends the usable chain; record bytes live in reused buffers.
#include "prefix/ssd_restorer.h"

#include <gtest/gtest.h>

#include "prefix/buffer_pool.h"
#include "ssd_test_util.h"

namespace cairn {
namespace {

TEST(SsdRestorer, RestoresAChainAndStopsAtAFailingPage) {
  test::TempDir tmp;
  std::mt19937 rng(51);
  const TierNamespace ns = test::test_ns();
  SsdTier tier(tmp.path(), int64_t{1} << 30, ns);
  std::vector<PageRecord> rs;
  std::vector<PageKey> keys;
  PageKey parent;
  for (int i = 0; i < 12; ++i) {
    rs.push_back(test::make_record(rng, ns, parent));
    ASSERT_TRUE(tier.write(rs.back()).ok());
    keys.push_back(parent = rs.back().key);
  }
  test::flip_byte(tier.path_of(keys[7]), kPageFileAlign + 3);
  SsdRestorer restorer(tier, 3);
  const auto h = restorer.submit(keys);
  h->wait();
  EXPECT_TRUE(h->done());
  EXPECT_EQ(h->ready_prefix(), 7u);
  for (size_t i = 0; i < keys.size(); ++i) {
    const SsdRead got = h->take(i);
    if (i == 7) {
      EXPECT_EQ(got.error, PageFileError::kPayloadChecksum);
      continue;
    }
    ASSERT_TRUE(got.record) << i;
    test::expect_same(rs[i], *got.record);
  }
  EXPECT_EQ(tier.stats().hits, 11);
  EXPECT_EQ(tier.stats().corrupt, 1);
}

TEST(SsdRestorer, CancelSettlesEveryPage) {
  test::TempDir tmp;
  std::mt19937 rng(52);
  const TierNamespace ns = test::test_ns();
  SsdTier tier(tmp.path(), int64_t{1} << 30, ns);
  std::vector<PageKey> keys;
  for (int i = 0; i < 50; ++i) {
    const PageRecord r = test::make_record(rng, ns, PageKey{});
    ASSERT_TRUE(tier.write(r).ok());
    keys.push_back(r.key);
  }
  SsdRestorer restorer(tier, 1);
  const auto h = restorer.submit(keys);
  h->cancel();
  h->wait();
  int served = 0, cancelled = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const SsdRead got = h->take(i);
    if (got.record)
      ++served;
    else if (got.detail == "cancelled")
      ++cancelled;
  }
  EXPECT_EQ(served + cancelled, 50);
  EXPECT_GT(cancelled, 0);
}

TEST(BufferPool, ReusesReturnedBuffersUpToItsCap) {
  BufferPool pool(3 << 20);
  const uint8_t* first = nullptr;
  {
    auto a = pool.acquire(1 << 20);
    first = a->data();
    EXPECT_GE(a->capacity(), size_t{1} << 20);
  }
  EXPECT_EQ(pool.kept_bytes(), 1 << 20);
  auto b = pool.acquire(1000);  // the kept buffer fits: reused
  EXPECT_EQ(b->data(), first);
  EXPECT_EQ(pool.kept_bytes(), 0);
  {
    auto big = pool.acquire(8 << 20);  // larger than the cap: freed on return
  }
  EXPECT_EQ(pool.kept_bytes(), 0);
}

TEST(PageRecord, OwnCopiesTheBytesItPointsAt) {
  std::mt19937 rng(53);
  const TierNamespace ns = test::test_ns();
  test::RecordShape s;
  s.absent = {false, true};
  PageRecord r = test::make_record(rng, ns, PageKey{}, s);
  const PageRecord copy_of = r;  // shares the owner
  std::vector<uint8_t> page(r.groups[0].bytes.begin(), r.groups[0].bytes.end());
  r.groups[0].bytes = page;  // a span into "pool" memory
  r.owner = nullptr;
  BufferPool pool(1 << 20);
  r.own(&pool);
  std::fill(page.begin(), page.end(), 0);  // the pool page is reused
  test::expect_same(copy_of, r);
  EXPECT_TRUE(r.groups[1].bytes.empty());
}

}  // namespace
}  // namespace cairn
