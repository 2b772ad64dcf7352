#include "model/tp/rank_threads.h"

#include <algorithm>
#include <utility>

namespace cairn::tp {

RankThreads::RankThreads(int n_ranks, int threads_per_rank) {
  for (int r = 0; r < n_ranks; ++r)
    pools_.push_back(std::make_unique<ThreadPool>(std::max(1, threads_per_rank)));
  for (int r = 0; r < n_ranks; ++r) threads_.emplace_back([this, r] { loop(r); });
}

RankThreads::~RankThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void RankThreads::loop(int rank) {
  ThreadPool::bind_to_this_thread(pools_[static_cast<size_t>(rank)].get());
  uint64_t seen = 0;
  for (;;) {
    std::unique_lock<std::mutex> lock(mutex_);
    start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const auto* job = job_;
    const auto* on_failure = on_failure_;
    lock.unlock();
    std::exception_ptr error;
    try {
      (*job)(rank);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !first_error_) {
      first_error_ = error;
      (*on_failure)();  // under the lock: once, before any other rank's error is recorded
    }
    if (--pending_ == 0) done_cv_.notify_one();
  }
}

void RankThreads::run(const std::function<void(int)>& fn, const std::function<void()>& on_failure) {
  std::unique_lock<std::mutex> lock(mutex_);
  job_ = &fn;
  on_failure_ = &on_failure;
  first_error_ = nullptr;
  pending_ = n_ranks();
  ++generation_;
  start_cv_.notify_all();
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
  on_failure_ = nullptr;
  if (first_error_) std::rethrow_exception(std::exchange(first_error_, nullptr));
}

}  // namespace cairn::tp
