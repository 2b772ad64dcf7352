// A full disk: writes fail, counters rise, what was written still reads, flush
// is not durable, and nothing crashes. The disk is a 1 MiB tmpfs the test
// mounts (needs CAP_SYS_ADMIN); where mount is refused, the same story runs
// under RLIMIT_FSIZE (SIGXFSZ ignored, so a write past the limit fails with
// EFBIG instead of killing the process). The second test always runs that way.
// A ramfs mount shows the buffered fallback of reads.
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "checkpoint_test_util.h"
#include "prefix/checkpoint_store.h"
#include "prefix/spill_queue.h"
#include "prefix/ssd_tier.h"
#include "ssd_test_util.h"

namespace cairn {
namespace {

using namespace std::chrono_literals;

// Lowers this process's file size limit while alive.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = old_;
    lim.rlim_cur = bytes;
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &lim), 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  sighandler_t old_handler_ = SIG_DFL;
};

// A file system mounted at a fresh directory, unmounted (lazily) when done,
// also when an assertion ends the test early.
class Mount {
 public:
  Mount(const std::string& dir, const char* type, const char* options) : dir_(dir) {
    std::filesystem::create_directory(dir);
    ok_ = ::mount(type, dir.c_str(), type, 0, options) == 0;
    err_ = ok_ ? 0 : errno;
  }
  ~Mount() {
    if (ok_) {
      EXPECT_EQ(::umount2(dir_.c_str(), MNT_DETACH), 0);
    }
  }
  bool ok() const { return ok_; }
  int err() const { return err_; }

 private:
  std::string dir_;
  bool ok_ = false;
  int err_ = 0;
};

// Spills 40 pages, alternately ~12 KB and ~104 KB files, through a queue into a
// tier on root, where not all fit; checks the counters and that what was
// written reads back.
void fill_until_full(const std::string& root, int expect_err) {
  std::mt19937 rng(41);
  const TierNamespace ns = test::test_ns();
  test::RecordShape small, large;
  small.group_bytes = {4 * 1024, 4 * 1024};
  large.group_bytes = {96 * 1024, 4 * 1024};
  std::vector<PageRecord> rs;
  SsdTier tier(root, int64_t{1} << 30, ns);  // the cap is not what stops it
  SpillQueue q(int64_t{64} << 20);
  for (int i = 0; i < 40; ++i) {
    rs.push_back(test::make_record(rng, ns, PageKey{}, i % 2 ? large : small));
    q.enqueue_page(tier, rs.back());
  }
  const FlushResult r = q.flush(30s);
  EXPECT_FALSE(r.durable);
  EXPECT_FALSE(r.timed_out);
  EXPECT_GT(r.failed, 0);
  const SpillStats qs = q.stats();
  const SsdTierStats ts = tier.stats();
  EXPECT_EQ(qs.failed, r.failed);
  EXPECT_EQ(ts.write_failures, qs.failed);
  EXPECT_EQ(ts.writes + ts.write_failures, 40);
  EXPECT_NE(qs.last_error.find(std::strerror(expect_err)), std::string::npos) << qs.last_error;
  int served = 0;
  for (const PageRecord& rec : rs) {
    const SsdRead got = tier.read(rec.key);
    if (!got.record) {
      EXPECT_EQ(got.error, PageFileError::kMissing);
      continue;
    }
    ++served;
    test::expect_same(rec, *got.record);
  }
  EXPECT_EQ(served, ts.writes);
  EXPECT_EQ(tier.stats().corrupt, 0);
  EXPECT_TRUE(std::filesystem::is_empty(tier.dir() + "/tmp"));  // failed writes leave nothing
  std::printf("full disk: %lld written, %lld failed (%s), %lld O_DIRECT-refused reads\n",
              static_cast<long long>(ts.writes), static_cast<long long>(qs.failed),
              qs.last_error.c_str(), static_cast<long long>(tier.stats().buffered_reads));
}

TEST(FullDisk, WritesFailAndReadsGoOn) {
  test::TempDir tmp;
  const std::string mnt = tmp.path() + "/mnt";
  const Mount m(mnt, "tmpfs", "size=1m");
  if (m.ok()) {
    std::printf("full disk: 1 MiB tmpfs at %s\n", mnt.c_str());
    fill_until_full(mnt, ENOSPC);
    return;
  }
  std::printf("full disk: mount refused (%s); RLIMIT_FSIZE of 64 KiB instead\n",
              std::strerror(m.err()));
  FileSizeLimit limit(64 * 1024);  // the large files fail, the small ones fit
  fill_until_full(tmp.path(), EFBIG);
}

TEST(FullDisk, FileSizeLimitFailsLargeWrites) {
  test::TempDir tmp;
  std::mt19937 rng(42);
  const TierNamespace ns = test::test_ns();
  SsdTier tier(tmp.path(), int64_t{1} << 30, ns);
  SpillQueue q(int64_t{64} << 20);
  test::RecordShape small, large;
  small.group_bytes = {8 * 1024, 1024};
  large.group_bytes = {200 * 1024, 1024};
  const PageRecord a = test::make_record(rng, ns, PageKey{}, small);
  const PageRecord b = test::make_record(rng, ns, PageKey{}, large);
  const PageRecord c = test::make_record(rng, ns, PageKey{}, small);
  {
    FileSizeLimit limit(64 * 1024);
    for (const PageRecord* r : {&a, &b, &c}) q.enqueue_page(tier, *r);
    const FlushResult r = q.flush(30s);
    EXPECT_FALSE(r.durable);
    EXPECT_EQ(r.failed, 1);
  }
  EXPECT_NE(q.stats().last_error.find(std::strerror(EFBIG)), std::string::npos);
  EXPECT_EQ(tier.stats().write_failures, 1);
  EXPECT_TRUE(tier.read(a.key).record);
  EXPECT_FALSE(tier.read(b.key).record);
  EXPECT_TRUE(tier.read(c.key).record);
  q.enqueue_page(tier, b);  // the limit lifted: the same page writes
  EXPECT_TRUE(q.flush(30s).durable);
  EXPECT_TRUE(tier.read(b.key).record);
}

// Checkpoints of one generation, each larger than the last, until the disk
// refuses one: the failure is counted, no temporary file stays, and the newest
// checkpoint written before it is still the one found.
void checkpoint_until_full(const std::string& root, int expect_err) {
  std::mt19937 rng(44);
  const TierNamespace ns = test::checkpoint_ns();
  CheckpointStore store(root, ns);
  const PageKey key{77, 88};
  Checkpoint c = test::make_checkpoint(rng, key, 200, 1);
  int64_t last_good = 0;
  IoStatus s;
  while (c.step() < 200000 && (s = store.write(c)).ok()) {
    last_good = c.step();
    for (int i = 0; i < 4000; ++i) {
      c.tokens.push_back(static_cast<int32_t>(rng() % 512));
      c.logprobs.push_back(-1.0f);
      c.top.emplace_back();
    }
  }
  ASSERT_FALSE(s.ok()) << "the disk never filled";
  EXPECT_EQ(s.err, expect_err) << s.what;
  ASSERT_GT(last_good, 0);
  EXPECT_EQ(store.stats().write_failures, 1);
  EXPECT_TRUE(std::filesystem::is_empty(store.dir() + "/tmp"));
  const CheckpointRead got = store.find(key);
  ASSERT_TRUE(got.checkpoint) << got.detail;
  EXPECT_EQ(got.checkpoint->step(), last_good);
  EXPECT_TRUE(store.remove(key).ok());  // removal needs no room
  EXPECT_FALSE(store.find(key).checkpoint);
  std::printf("checkpoints on a full disk: step %lld kept, the next failed (%s)\n",
              static_cast<long long>(last_good), s.what.c_str());
}

TEST(FullDisk, CheckpointWritesFailAndTheNewestGoodOneStays) {
  test::TempDir tmp;
  const std::string mnt = tmp.path() + "/mnt";
  const Mount m(mnt, "tmpfs", "size=1m");
  if (m.ok()) return checkpoint_until_full(mnt, ENOSPC);
  FileSizeLimit limit(256 * 1024);
  checkpoint_until_full(tmp.path(), EFBIG);
}

// ramfs refuses O_DIRECT at open: reads fall back to buffered ones and say so.
TEST(MountedFs, BufferedReadsWhereODirectIsRefused) {
  test::TempDir tmp;
  const std::string mnt = tmp.path() + "/mnt";
  const Mount m(mnt, "ramfs", nullptr);
  if (!m.ok()) GTEST_SKIP() << "mount ramfs refused: " << std::strerror(m.err());
  {
    std::mt19937 rng(43);
    const TierNamespace ns = test::test_ns();
    SsdTier tier(mnt, int64_t{1} << 30, ns);
    std::vector<PageRecord> rs;
    for (int i = 0; i < 3; ++i) {
      rs.push_back(test::make_record(rng, ns, PageKey{}));
      ASSERT_TRUE(tier.write(rs.back()).ok());
    }
    for (const PageRecord& r : rs) {
      const SsdRead got = tier.read(r.key);
      ASSERT_TRUE(got.record);
      test::expect_same(r, *got.record);
    }
    EXPECT_EQ(tier.stats().buffered_reads, 3);
    EXPECT_EQ(tier.stats().hits, 3);
  }
}

}  // namespace
}  // namespace cairn
