// Aligned buffers handed out and taken back, so that page reads and spill
// copies reuse memory already mapped: first touches of fresh memory (page
// faults) can cost more than the disk itself (on a paravirtualized machine
// measured here, ~13 ms per MB). Thread-safe; buffers may outlive the pool.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "prefix/page_file_io.h"

namespace cairn {

class BufferPool {
 public:
  // Keeps at most max_kept_bytes of returned buffers for reuse; frees the rest.
  explicit BufferPool(int64_t max_kept_bytes);

  // A buffer of capacity ≥ n (size 0); returns to the pool when the last
  // reference goes.
  std::shared_ptr<AlignedBytes> acquire(size_t n);
  int64_t kept_bytes() const;

 private:
  struct State {
    std::mutex mu;
    int64_t max_kept = 0, kept = 0;
    std::vector<std::unique_ptr<AlignedBytes>> free;
  };
  std::shared_ptr<State> state_;
};

}  // namespace cairn
