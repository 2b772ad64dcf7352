// One thread per tensor-parallel rank, kept for the model's life. Each runs its
// rank's share of a forward step; the CPU ops it calls use the rank's own
// ThreadPool (bound to its thread), so ranks never share a pool. Ops give the
// same bits at any thread count (ops.h), so the split of cores does not matter
// to results.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/thread_pool.h"

namespace cairn::tp {

class RankThreads {
 public:
  // threads_per_rank ≥ 1 CPU threads for each rank's ops (its own thread included).
  RankThreads(int n_ranks, int threads_per_rank);
  ~RankThreads();
  RankThreads(const RankThreads&) = delete;
  RankThreads& operator=(const RankThreads&) = delete;

  int n_ranks() const { return static_cast<int>(threads_.size()); }

  // Runs fn(r) on rank r's thread for every rank and waits for all. The first
  // rank to throw calls on_failure() (once, from its thread) so that ranks
  // blocked on it can stop; its exception is rethrown once every rank returned.
  // Not reentrant; one caller at a time.
  void run(const std::function<void(int rank)>& fn, const std::function<void()>& on_failure);

 private:
  void loop(int rank);

  std::vector<std::unique_ptr<ThreadPool>> pools_;  // [n_ranks]
  std::vector<std::thread> threads_;                // [n_ranks]
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int)>* job_ = nullptr;
  const std::function<void()>* on_failure_ = nullptr;
  uint64_t generation_ = 0;
  int pending_ = 0;
  std::exception_ptr first_error_;
  bool stop_ = false;
};

}  // namespace cairn::tp
