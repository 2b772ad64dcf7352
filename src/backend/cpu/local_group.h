// The in-process communicator: N ranks as threads of one process, exchanging
// host f32 tensors through shared memory. Each collective is two barriers: the
// ranks publish their buffers, then each rank reduces (or copies) its part while
// every buffer is still live. For an all-reduce, rank r owns elements
// [r * count / N, (r + 1) * count / N): it sums them over the ranks in rank
// order and writes the sum back into every rank's buffer, so no element is read
// after it is written, and the bits do not depend on which rank came first.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/communicator.h"

namespace cairn {

class LocalGroup {
 public:
  // Error(kInvalidArgument) for n_ranks < 1.
  explicit LocalGroup(int n_ranks);
  ~LocalGroup();
  LocalGroup(const LocalGroup&) = delete;
  LocalGroup& operator=(const LocalGroup&) = delete;

  int size() const { return n_ranks_; }
  // Rank r's communicator; lives as long as the group. Each must be used by one thread.
  Communicator& rank(int r) { return *ranks_.at(static_cast<size_t>(r)); }

  // What the ranks share (used by the communicators).
  struct Shared {
    std::mutex mutex;
    std::condition_variable cv;
    int n_ranks = 0;
    int arrived = 0;
    uint64_t generation = 0;
    bool aborted = false;
    std::vector<float*> buffers;  // [n_ranks] published by the current collective
    std::vector<int64_t> counts;  // [n_ranks] their element counts

    // Blocks until every rank has arrived. Error(kUnavailable) once the group is aborted.
    void arrive_and_wait(int rank);
  };

 private:
  int n_ranks_;
  Shared shared_;
  std::vector<std::unique_ptr<Communicator>> ranks_;
};

}  // namespace cairn
