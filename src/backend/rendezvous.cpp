#include "backend/rendezvous.h"

#include <chrono>
#include <thread>

#include "core/error.h"

namespace cairn {

Rendezvous::Rendezvous(int n_ranks, int spin_us) : n_ranks_(n_ranks), spin_us_(spin_us) {
  if (n_ranks < 1) fail(ErrorCode::kInvalidArgument, "a group needs ≥ 1 rank, got {}", n_ranks);
  buffers_.assign(static_cast<size_t>(n_ranks), nullptr);
  counts_.assign(static_cast<size_t>(n_ranks), 0);
  ready_.assign(static_cast<size_t>(n_ranks), nullptr);
  done_.assign(static_cast<size_t>(n_ranks), nullptr);
}

void Rendezvous::spin(uint64_t seen) const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
  for (uint32_t i = 1; generation_.load(std::memory_order_acquire) == seen && !aborted_; ++i) {
    if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return;
#if defined(__x86_64__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }
}

void Rendezvous::arrive_and_wait(int rank) {
  uint64_t seen = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    seen = generation_;
    if (!aborted_ && ++arrived_ == n_ranks_) {
      arrived_ = 0;
      generation_.store(seen + 1, std::memory_order_release);
      cv_.notify_all();
      return;
    }
  }
  if (spin_us_ > 0) spin(seen);
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return aborted_ || generation_ != seen; });
  if (generation_ == seen)
    fail(ErrorCode::kUnavailable, "tensor-parallel rank {}: the group was aborted", rank);
}

void Rendezvous::publish(int rank, float* data, int64_t count, const char* what, void* ready) {
  buffers_[static_cast<size_t>(rank)] = data;
  counts_[static_cast<size_t>(rank)] = count;
  ready_[static_cast<size_t>(rank)] = ready;
  arrive_and_wait(rank);
  for (int r = 1; r < n_ranks_; ++r)
    if (counts_[static_cast<size_t>(r)] != counts_[0])
      fail(ErrorCode::kInvalidArgument, "{}: rank 0 passed {} elements, rank {} passed {}", what,
           counts_[0], r, counts_[static_cast<size_t>(r)]);
}

void Rendezvous::arrive_done(int rank, void* done) {
  done_[static_cast<size_t>(rank)] = done;
  arrive_and_wait(rank);
}

void Rendezvous::abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  aborted_ = true;
  cv_.notify_all();
}

void Rendezvous::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  aborted_ = false;
  arrived_ = 0;
}

}  // namespace cairn
