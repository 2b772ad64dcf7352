// Runs fn(rank) on one thread per rank and joins them; the first failure (in
// time) aborts the group so that ranks waiting in a collective wake, and is
// rethrown after every thread has joined.
#pragma once

#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "backend/cpu/local_group.h"

namespace cairn::tp::test {

inline void run_ranks(RankGroup& group, const std::function<void(int rank)>& fn) {
  std::mutex mutex;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  for (int r = 0; r < group.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!first) first = std::current_exception();
        group.rank(r).abort();
      }
    });
  for (std::thread& t : threads) t.join();
  if (first) {
    group.rank(0).reset();
    std::rethrow_exception(first);
  }
}

}  // namespace cairn::tp::test
