// Restores on worker threads: the readers run a restore's jobs in order,
// several at once, and settle the rest as skipped when stopped; record bytes
// live in reused buffers.
#include "prefix/ssd_restorer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "prefix/buffer_pool.h"
#include "ssd_test_util.h"

namespace cairn {
namespace {

// Jobs are taken in submission order by several readers at once: a job that
// waits for an earlier one is never left waiting, and every job runs once.
TEST(SsdRestorer, ReadersRunJobsInOrderSeveralAtOnce) {
  constexpr int kJobs = 200;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> ran(kJobs, 0);
  int max_running = 0, running = 0;
  {
    SsdRestorer restorer(4);
    std::vector<SsdRestorer::Job> jobs;
    for (int i = 0; i < kJobs; ++i)
      jobs.push_back([&, i](bool skip) {
        std::unique_lock lock(mu);
        EXPECT_FALSE(skip);
        max_running = std::max(max_running, ++running);
        cv.notify_all();
        // The first four meet: four readers at once (bounded, should there be fewer).
        if (i < 4) cv.wait_for(lock, std::chrono::seconds(10), [&] { return max_running == 4; });
        // Job i waits for job i - 4 (queued before it, so already taken).
        if (i >= 4) cv.wait(lock, [&] { return ran[static_cast<size_t>(i - 4)] > 0; });
        ++ran[static_cast<size_t>(i)];
        --running;
        cv.notify_all();
      });
    restorer.submit_jobs(std::move(jobs));
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return std::count(ran.begin(), ran.end(), 1) == kJobs; });
  }
  EXPECT_EQ(std::count(ran.begin(), ran.end(), 1), kJobs);
  EXPECT_EQ(max_running, 4);
}

// Destroying the restorer runs the jobs not yet started as skipped, so each
// settles what it stands for; none is dropped.
TEST(SsdRestorer, StoppingRunsTheRestAsSkipped) {
  std::atomic<int> read{0}, skipped{0};
  std::atomic<bool> release{false};
  std::thread releaser;
  {
    SsdRestorer restorer(1);
    std::vector<SsdRestorer::Job> jobs;
    jobs.push_back([&](bool skip) {
      while (!release.load()) std::this_thread::yield();  // holds the one reader
      ++(skip ? skipped : read);
    });
    for (int i = 0; i < 20; ++i) jobs.push_back([&](bool skip) { ++(skip ? skipped : read); });
    restorer.submit_jobs(std::move(jobs));
    releaser = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      release = true;
    });
  }  // stops while the first job still holds the reader
  releaser.join();
  EXPECT_EQ(read.load() + skipped.load(), 21);
  EXPECT_GE(skipped.load(), 1);
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
