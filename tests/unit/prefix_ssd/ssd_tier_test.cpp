// The SSD tier on real files: round trips, restart, LRU by bytes, locking and
// overlapping readers and a writer.
#include "prefix/ssd_tier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "ssd_test_util.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using test::make_record;

TEST(SsdTier, WritesReadsAndSurvivesARestart) {
  test::TempDir tmp;
  std::mt19937 rng(11);
  const TierNamespace ns = test::test_ns();
  std::vector<PageRecord> chain;
  PageKey parent;
  for (int i = 0; i < 5; ++i) {
    test::RecordShape s;
    s.absent = {false, i < 2};  // the sliding group had released the first pages
    chain.push_back(make_record(rng, ns, parent, s));
    parent = chain.back().key;
  }
  int64_t bytes = 0;
  {
    SsdTier tier(tmp.path(), int64_t{1} << 30, ns);
    for (const PageRecord& r : chain) ASSERT_TRUE(tier.write(r).ok());
    for (const PageRecord& r : chain) {
      EXPECT_TRUE(tier.contains(r.key));
      const SsdRead got = tier.read(r.key);
      ASSERT_TRUE(got.record) << page_file_error_name(got.error) << " " << got.detail;
      test::expect_same(r, *got.record);
    }
    const SsdTierStats st = tier.stats();
    EXPECT_EQ(st.files, 5);
    EXPECT_EQ(st.writes, 5);
    EXPECT_EQ(st.hits, 5);
    EXPECT_GT(st.restore_bytes, 5 * 4096);
    EXPECT_GT(st.restore_seconds, 0);
    bytes = st.bytes;
    EXPECT_TRUE(tier.write(chain[0]).ok());  // already there: skipped
    EXPECT_EQ(tier.stats().writes, 5);
  }
  SsdTier again(tmp.path(), int64_t{1} << 30, ns);  // "restart": index from the headers
  EXPECT_EQ(again.stats().files, 5);
  EXPECT_EQ(again.stats().bytes, bytes);
  EXPECT_TRUE(again.issues().empty());
  for (const PageRecord& r : chain) {
    const SsdRead got = again.read(r.key);
    ASSERT_TRUE(got.record);
    test::expect_same(r, *got.record);
  }
  const SsdRead none = again.read(PageKey{5, 5});
  EXPECT_FALSE(none.record);
  EXPECT_EQ(none.error, PageFileError::kMissing);
  EXPECT_EQ(again.stats().misses, 1);
}

TEST(SsdTier, MatchChainWalksTheIndex) {
  test::TempDir tmp;
  std::mt19937 rng(12);
  const TierNamespace ns = test::test_ns();
  SsdTier tier(tmp.path(), int64_t{1} << 30, ns);
  std::vector<int32_t> tokens;
  PageKey parent;
  std::vector<PageKey> keys;
  for (int i = 0; i < 4; ++i) {
    const PageRecord r = make_record(rng, ns, parent);
    tokens.insert(tokens.end(), r.tokens.begin(), r.tokens.end());
    if (i != 2) {  // a hole at page 2
      ASSERT_TRUE(tier.write(r).ok());
    }
    keys.push_back(parent = r.key);
  }
  tokens.push_back(1);  // a partial page is never part of a chain
  EXPECT_EQ(tier.match_chain(PageKey{}, tokens, 16, 10), (std::vector<PageKey>{keys[0], keys[1]}));
  EXPECT_EQ(tier.match_chain(PageKey{}, tokens, 16, 1), (std::vector<PageKey>{keys[0]}));
  // Continuing a chain whose first pages are in RAM.
  const std::span<const int32_t> rest(tokens.data() + 48, 16);
  EXPECT_EQ(tier.match_chain(keys[2], rest, 16, 10), (std::vector<PageKey>{keys[3]}));
}

TEST(SsdTier, EvictsLeastRecentlyUsedLeavesByBytes) {
  test::TempDir tmp;
  std::mt19937 rng(13);
  const TierNamespace ns = test::test_ns();
  const PageRecord a = make_record(rng, ns, PageKey{});
  const PageRecord b = make_record(rng, ns, a.key);  // a's child
  const PageRecord c = make_record(rng, ns, PageKey{});
  const PageRecord d = make_record(rng, ns, PageKey{});
  const PageRecord e = make_record(rng, ns, PageKey{});
  const auto file_bytes = static_cast<int64_t>(encode_page_file(a, ns).size());
  SsdTier tier(tmp.path(), 3 * file_bytes + file_bytes / 2, ns);
  for (const PageRecord* r : {&a, &b, &c}) ASSERT_TRUE(tier.write(*r).ok());
  // a is oldest but b descends from it: the oldest leaf, b, goes.
  ASSERT_TRUE(tier.write(d).ok());
  EXPECT_TRUE(tier.contains(a.key));
  EXPECT_FALSE(tier.contains(b.key));
  EXPECT_FALSE(fs::exists(tier.path_of(b.key)));
  ASSERT_TRUE(tier.read(a.key).record);  // a used: c is now the oldest
  ASSERT_TRUE(tier.write(e).ok());
  EXPECT_FALSE(tier.contains(c.key));
  EXPECT_FALSE(fs::exists(tier.path_of(c.key)));
  EXPECT_TRUE(tier.contains(a.key) && tier.contains(d.key) && tier.contains(e.key));
  const SsdTierStats st = tier.stats();
  EXPECT_EQ(st.evictions, 2);
  EXPECT_EQ(st.files, 3);
  EXPECT_LE(st.bytes, st.max_bytes);
}

TEST(SsdTier, ACapBelowTheFilesEvictsAtStart) {
  test::TempDir tmp;
  std::mt19937 rng(14);
  const TierNamespace ns = test::test_ns();
  std::vector<PageRecord> rs;
  int64_t file_bytes = 0;
  {
    SsdTier tier(tmp.path(), int64_t{1} << 30, ns);
    for (int i = 0; i < 4; ++i) {
      rs.push_back(make_record(rng, ns, PageKey{}));
      ASSERT_TRUE(tier.write(rs.back()).ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // distinct mtimes
    }
    file_bytes = tier.stats().bytes / 4;
  }
  SsdTier tier(tmp.path(), 2 * file_bytes, ns);
  EXPECT_EQ(tier.stats().files, 2);
  EXPECT_FALSE(tier.contains(rs[0].key));
  EXPECT_FALSE(tier.contains(rs[1].key));
  EXPECT_TRUE(tier.contains(rs[3].key));
  EXPECT_THROW(SsdTier(tmp.path(), 0, ns), Error);
}

TEST(SsdTier, OneProcessPerDirectory) {
  test::TempDir tmp;
  const TierNamespace ns = test::test_ns();
  SsdTier tier(tmp.path(), 1 << 20, ns);
  EXPECT_THROW(SsdTier(tmp.path(), 1 << 20, ns), Error);
  SsdTier other(tmp.path(), 1 << 20, test::test_ns("model-b"));  // its own directory
}

TEST(SsdTier, ReadersAndAWriterOverlap) {
  test::TempDir tmp;
  std::mt19937 rng(15);
  const TierNamespace ns = test::test_ns();
  std::vector<PageRecord> rs;
  for (int i = 0; i < 40; ++i) rs.push_back(make_record(rng, ns, PageKey{}));
  const auto file_bytes = static_cast<int64_t>(encode_page_file(rs[0], ns).size());
  SsdTier tier(tmp.path(), 10 * file_bytes, ns);  // evictions while reading
  std::atomic<bool> done{false};
  std::atomic<int> served{0}, wrong{0};
  auto reader = [&] {
    while (!done)
      for (const PageRecord& r : rs) {
        const SsdRead got = tier.read(r.key);
        if (got.record) {
          ++served;
          if (!test::same_bytes(got.record->groups[0].bytes, r.groups[0].bytes)) ++wrong;
        } else if (got.error != PageFileError::kMissing) {
          ++wrong;
        }
      }
  };
  std::thread t1(reader), t2(reader);
  for (int round = 0; round < 3; ++round)
    for (const PageRecord& r : rs) EXPECT_TRUE(tier.write(r).ok());
  done = true;
  t1.join();
  t2.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(served, 0);
  EXPECT_EQ(tier.stats().corrupt, 0);
  EXPECT_LE(tier.stats().bytes, 10 * file_bytes);
}

}  // namespace
}  // namespace cairn
