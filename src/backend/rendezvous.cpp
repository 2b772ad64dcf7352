#include "backend/rendezvous.h"

#include "core/error.h"

namespace cairn {

Rendezvous::Rendezvous(int n_ranks) : n_ranks_(n_ranks) {
  if (n_ranks < 1) fail(ErrorCode::kInvalidArgument, "a group needs ≥ 1 rank, got {}", n_ranks);
  buffers_.assign(static_cast<size_t>(n_ranks), nullptr);
  counts_.assign(static_cast<size_t>(n_ranks), 0);
}

void Rendezvous::arrive_and_wait(int rank) {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t seen = generation_;
  if (!aborted_ && ++arrived_ == n_ranks_) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  cv_.wait(lock, [&] { return aborted_ || generation_ != seen; });
  if (generation_ == seen)
    fail(ErrorCode::kUnavailable, "tensor-parallel rank {}: the group was aborted", rank);
}

void Rendezvous::publish(int rank, float* data, int64_t count, const char* what) {
  buffers_[static_cast<size_t>(rank)] = data;
  counts_[static_cast<size_t>(rank)] = count;
  arrive_and_wait(rank);
  for (int r = 1; r < n_ranks_; ++r)
    if (counts_[static_cast<size_t>(r)] != counts_[0])
      fail(ErrorCode::kInvalidArgument, "{}: rank 0 passed {} elements, rank {} passed {}", what,
           counts_[0], r, counts_[static_cast<size_t>(r)]);
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
