#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace cairn {
namespace {

TEST(ThreadPool, CoversEveryIndexOnce) {
  ThreadPool pool(3);
  for (int64_t n : {1, 2, 3, 7, 100, 1001}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, MinChunkKeepsSmallLoopsTogether) {
  ThreadPool pool(4);
  std::atomic<int> calls{0};
  pool.parallel_for(
      10, [&](int64_t, int64_t) { calls++; }, 16);
  EXPECT_EQ(calls.load(), 1);
}

TEST(ThreadPool, ManyRoundsDoNotDeadlock) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  for (int r = 0; r < 2000; ++r) pool.parallel_for(8, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 16000);
}

// Threads that share a pool take turns: every job covers its range once, none hangs.
TEST(ThreadPool, CallersOnSeveralThreadsTakeTurns) {
  ThreadPool pool(3);
  constexpr int kCallers = 4, kRounds = 500;
  std::vector<std::atomic<int64_t>> sums(kCallers);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r)
        pool.parallel_for(64, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) sums[static_cast<size_t>(c)] += i;
        });
    });
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(sums[static_cast<size_t>(c)].load(), kRounds * 2016);
}

// A thread bound to its own pool runs ops there; other threads keep the global one.
TEST(ThreadPool, BoundPoolIsThisThreadsOnly) {
  ThreadPool own(2);
  ThreadPool* global = &ThreadPool::global();
  ThreadPool* seen_bound = nullptr;
  ThreadPool* seen_other = nullptr;
  std::thread bound([&] {
    ThreadPool::bind_to_this_thread(&own);
    seen_bound = &ThreadPool::global();
    ThreadPool::bind_to_this_thread(nullptr);
  });
  std::thread other([&] { seen_other = &ThreadPool::global(); });
  bound.join();
  other.join();
  EXPECT_EQ(seen_bound, &own);
  EXPECT_EQ(seen_other, global);
  EXPECT_EQ(&ThreadPool::global(), global);
}

}  // namespace
}  // namespace cairn
