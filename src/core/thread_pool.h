// A fixed pool of worker threads for data-parallel loops. parallel_for splits
// [0, n) into contiguous ranges, one per thread; each output element must be
// computed entirely inside one call of fn so that results never depend on the
// number of threads (determinism, DESIGN.md decision 7).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cairn {

class ThreadPool {
 public:
  // n_threads includes the calling thread; 0 means hardware_concurrency().
  explicit ThreadPool(int n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int n_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over disjoint ranges covering [0, n), ranges at least
  // min_chunk long (so tiny loops stay on one thread). Blocks until all return.
  // Callers on several threads take turns (one job at a time). Not reentrant: fn
  // must not call parallel_for on the same pool.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                    int64_t min_chunk = 1);

  // The pool CPU ops use on the calling thread: the one bound to this thread
  // (a tensor-parallel rank's own), else the process-wide pool.
  static ThreadPool& global();
  static void set_global_threads(int n_threads);
  // Makes global() return `pool` on the calling thread (nullptr: the process-wide
  // pool again). The pool must outlive the binding.
  static void bind_to_this_thread(ThreadPool* pool);

 private:
  void worker_loop(int index);

  std::vector<std::thread> workers_;
  std::mutex callers_;  // held by the caller whose job the workers run
  std::mutex mutex_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0;
  int job_parts_ = 0;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

}  // namespace cairn
