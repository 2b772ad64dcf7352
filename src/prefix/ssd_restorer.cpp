#include "prefix/ssd_restorer.h"

#include <algorithm>

namespace cairn {

SsdRestorer::SsdRestorer(int n_threads) {
  for (int i = 0; i < std::max(n_threads, 1); ++i) threads_.emplace_back([this] { reader(); });
}

SsdRestorer::~SsdRestorer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void SsdRestorer::submit_jobs(std::vector<Job> jobs) {
  {
    std::lock_guard lock(mu_);
    for (Job& j : jobs) tasks_.push_back(std::move(j));
  }
  cv_.notify_all();
}

// Takes jobs in submission order; after stop, runs the rest as skipped.
void SsdRestorer::reader() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;
    Job job = std::move(tasks_.front());
    tasks_.pop_front();
    const bool skip = stop_;
    lock.unlock();
    job(skip);
    lock.lock();
  }
}

}  // namespace cairn
