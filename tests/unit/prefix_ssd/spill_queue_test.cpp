// The spill queue: order, the byte cap, flush windows and failures.
#include "prefix/spill_queue.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <future>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "prefix/ssd_tier.h"
#include "ssd_test_util.h"

namespace cairn {
namespace {

using namespace std::chrono_literals;

// A job the worker blocks in until release(): holds the queue's head in flight.
struct Gate {
  std::promise<void> entered, go;
  std::shared_future<void> go_f = go.get_future().share();
  SpillJob job(int64_t bytes = 0) {
    return {bytes, false, [this] {
              entered.set_value();
              go_f.wait();
              return IoStatus{};
            }};
  }
  void wait_entered() { entered.get_future().wait(); }
  void release() { go.set_value(); }
};

struct Log {
  std::mutex mu;
  std::vector<int> ran;
  SpillJob job(int id, int64_t bytes, bool droppable, int err = 0) {
    return {bytes, droppable, [this, id, err] {
              std::lock_guard lock(mu);
              ran.push_back(id);
              return IoStatus{err, err ? "write: No space left on device" : ""};
            }};
  }
};

TEST(SpillQueue, RunsJobsStrictlyInOrder) {
  SpillQueue q(1 << 20);
  Log log;
  for (int i = 0; i < 200; ++i) EXPECT_EQ(q.enqueue(log.job(i, 10, true)), uint64_t(i + 1));
  const FlushResult r = q.flush(10s);
  EXPECT_TRUE(r.durable);
  std::vector<int> want(200);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(log.ran, want);
  const SpillStats st = q.stats();
  EXPECT_EQ(st.written, 200);
  EXPECT_EQ(st.pending_items, 0);
  EXPECT_EQ(st.pending_bytes, 0);
}

TEST(SpillQueue, OverItsCapDropsTheOldestDroppable) {
  SpillQueue q(250);
  Gate gate;
  Log log;
  q.enqueue(gate.job());
  gate.wait_entered();
  q.enqueue(log.job(1, 100, true));
  q.enqueue(log.job(2, 100, false));  // a checkpoint: never dropped
  EXPECT_EQ(q.stats().dropped, 0);
  q.enqueue(log.job(3, 100, true));  // 300 > 250: job 1 goes
  EXPECT_EQ(q.stats().dropped, 1);
  q.enqueue(log.job(4, 100, true));   // job 3 goes, not 2 (kept), not 4 (being added)
  q.enqueue(log.job(5, 100, false));  // job 4 goes; 2 and 5 stay, over the cap
  SpillStats st = q.stats();
  EXPECT_EQ(st.dropped, 3);
  EXPECT_EQ(st.pending_items, 3);  // gate, 2, 5
  EXPECT_EQ(st.pending_bytes, 200);
  gate.release();
  const FlushResult r = q.flush(10s);
  EXPECT_FALSE(r.durable);
  EXPECT_EQ(r.dropped, 3);
  EXPECT_EQ(log.ran, (std::vector<int>{2, 5}));
  EXPECT_TRUE(q.flush(10s).durable);  // a drop is reported once
}

TEST(SpillQueue, CapZeroKeepsTheNewestAndTheOneInFlight) {
  SpillQueue q(0);
  Gate gate;
  Log log;
  q.enqueue(gate.job(50));
  gate.wait_entered();
  for (int i = 0; i < 5; ++i) q.enqueue(log.job(i, 10, true));
  EXPECT_EQ(q.stats().dropped, 4);
  gate.release();
  q.flush(10s);
  EXPECT_EQ(log.ran, (std::vector<int>{4}));
}

TEST(SpillQueue, FlushWaitsOnlyForWhatCameBefore) {
  SpillQueue q(1 << 20);
  Gate first, second;
  q.enqueue(first.job(7));
  first.wait_entered();
  FlushResult early = q.flush(30ms);  // the first job is still in flight
  EXPECT_FALSE(early.durable);
  EXPECT_TRUE(early.timed_out);
  EXPECT_EQ(early.pending_items, 1);
  EXPECT_EQ(early.pending_bytes, 7);
  auto flushing = std::async(std::launch::async, [&] { return q.flush(10s); });
  std::this_thread::sleep_for(50ms);  // the flush has taken its target
  q.enqueue(second.job());            // after the call: not waited for
  first.release();
  const FlushResult r = flushing.get();
  EXPECT_TRUE(r.durable);
  EXPECT_FALSE(r.timed_out);
  second.wait_entered();
  EXPECT_EQ(q.stats().pending_items, 1);  // the second job is still running
  second.release();
  EXPECT_TRUE(q.flush(10s).durable);
}

TEST(SpillQueue, FailuresAreCountedAndServingGoesOn) {
  SpillQueue q(1 << 20);
  Log log;
  q.enqueue(log.job(1, 10, true));
  q.enqueue(log.job(2, 10, true, ENOSPC));
  q.enqueue({10, false, []() -> IoStatus { throw std::runtime_error("disk gone"); }});
  q.enqueue(log.job(3, 10, true, EIO));
  q.enqueue(log.job(4, 10, true));
  const FlushResult r = q.flush(10s);
  EXPECT_FALSE(r.durable);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.failed, 3);
  EXPECT_EQ(r.pending_items, 0);
  EXPECT_EQ(log.ran, (std::vector<int>{1, 2, 3, 4}));
  const SpillStats st = q.stats();
  EXPECT_EQ(st.failed, 3);
  EXPECT_EQ(st.written, 2);
  EXPECT_NE(st.last_error.find("No space"), std::string::npos);
  q.enqueue(log.job(5, 10, true));
  EXPECT_TRUE(q.flush(10s).durable);  // a new window, written whole
}

TEST(SpillQueue, ManyFailuresWithoutAFlushAreAllReported) {
  SpillQueue q(1 << 20);
  Log log;
  for (int i = 0; i < 10000; ++i) q.enqueue(log.job(i, 1, true, i % 2 ? EIO : 0));
  const FlushResult r = q.flush(30s);
  EXPECT_EQ(r.failed, 5000);
  EXPECT_FALSE(r.durable);
  EXPECT_TRUE(q.flush(30s).durable);
}

TEST(SpillQueue, DrainClosesTheQueue) {
  SpillQueue q(1 << 20);
  Log log;
  for (int i = 0; i < 10; ++i) q.enqueue(log.job(i, 10, true));
  const FlushResult r = q.drain(10s);
  EXPECT_TRUE(r.durable);
  EXPECT_EQ(log.ran.size(), 10u);
  EXPECT_EQ(q.enqueue(log.job(99, 10, true)), 0u);
  EXPECT_EQ(q.stats().enqueued, 10);
}

// The RAM tier hands spans into pool pages it frees right after: the queue
// copies them at enqueue.
TEST(SpillQueue, CopiesBytesARecordDoesNotOwn) {
  test::TempDir tmp;
  std::mt19937 rng(32);
  const TierNamespace ns = test::test_ns();
  SsdTier tier(tmp.path(), int64_t{1} << 30, ns);
  SpillQueue q(int64_t{64} << 20);
  Gate gate;
  q.enqueue(gate.job());
  gate.wait_entered();
  const PageRecord want = test::make_record(rng, ns, PageKey{});
  std::vector<uint8_t> pool_page(want.groups[0].bytes.begin(), want.groups[0].bytes.end());
  PageRecord r = want;
  r.groups[0].bytes = pool_page;
  r.owner = nullptr;
  q.enqueue_page(tier, r);
  std::fill(pool_page.begin(), pool_page.end(), 0);  // the page is freed and reused
  gate.release();
  EXPECT_TRUE(q.flush(10s).durable);
  const SsdRead got = tier.read(want.key);
  ASSERT_TRUE(got.record);
  test::expect_same(want, *got.record);
}

TEST(SpillQueue, SpillsPagesToTheSsdTier) {
  test::TempDir tmp;
  std::mt19937 rng(31);
  const TierNamespace ns = test::test_ns();
  std::vector<PageRecord> rs;
  {
    SsdTier tier(tmp.path(), int64_t{1} << 30, ns);
    SpillQueue q(int64_t{64} << 20);
    PageKey parent;
    for (int i = 0; i < 20; ++i) {
      rs.push_back(test::make_record(rng, ns, parent));
      parent = rs.back().key;
      EXPECT_GT(q.enqueue_page(tier, rs.back()), 0u);
    }
    EXPECT_TRUE(q.drain(10s).durable);
    EXPECT_EQ(tier.stats().writes, 20);
  }
  SsdTier after(tmp.path(), int64_t{1} << 30, ns);
  for (const PageRecord& r : rs) {
    const SsdRead got = after.read(r.key);
    ASSERT_TRUE(got.record);
    test::expect_same(r, *got.record);
  }
}

}  // namespace
}  // namespace cairn
