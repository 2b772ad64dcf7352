#include "core/thread_pool.h"

#include <algorithm>
#include <memory>

namespace cairn {
namespace {

std::unique_ptr<ThreadPool>& global_slot() {
  static std::unique_ptr<ThreadPool> pool;
  return pool;
}

// Range of part `i` of `parts` over [0, n).
void part_range(int64_t n, int parts, int i, int64_t* begin, int64_t* end) {
  *begin = n * i / parts;
  *end = n * (i + 1) / parts;
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) {
  if (n_threads <= 0)
    n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    std::unique_lock<std::mutex> lock(mutex_);
    start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    if (index >= job_parts_) continue;
    const auto* job = job_;
    int64_t n = job_n_;
    int parts = job_parts_;
    lock.unlock();
    int64_t b, e;
    part_range(n, parts, index, &b, &e);
    if (b < e) (*job)(b, e);
    lock.lock();
    if (--pending_ == 0) done_cv_.notify_one();
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                              int64_t min_chunk) {
  if (n <= 0) return;
  int64_t max_parts = std::max<int64_t>(1, n / std::max<int64_t>(1, min_chunk));
  int parts = static_cast<int>(std::min<int64_t>(n_threads(), max_parts));
  if (parts == 1) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> turn(callers_);  // a second caller's job would overwrite this one
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    job_n_ = n;
    job_parts_ = parts;
    pending_ = parts - 1;
    ++generation_;
  }
  start_cv_.notify_all();
  int64_t b, e;
  part_range(n, parts, 0, &b, &e);
  fn(b, e);
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
}

thread_local ThreadPool* bound_pool = nullptr;

ThreadPool& ThreadPool::global() {
  if (bound_pool != nullptr) return *bound_pool;
  auto& slot = global_slot();
  if (!slot) slot = std::make_unique<ThreadPool>(0);
  return *slot;
}

void ThreadPool::set_global_threads(int n_threads) {
  global_slot() = std::make_unique<ThreadPool>(n_threads);
}

void ThreadPool::bind_to_this_thread(ThreadPool* pool) {
  bound_pool = pool;
}

}  // namespace cairn
