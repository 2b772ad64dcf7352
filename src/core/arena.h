// Per-step scratch memory with stable addresses: one block reserved up front,
// bump-allocated during a step and reset between steps. A CUDA decode step can
// be captured as a graph over it because its addresses never move.
#pragma once

#include <cstddef>
#include <memory>

#include "core/tensor.h"

namespace cairn {

class Arena {
 public:
  explicit Arena(size_t capacity_bytes);

  // A contiguous tensor carved from the arena; valid until reset().
  // Throws Error(kOutOfMemory) when the arena cannot hold it.
  Tensor allocate(const Shape& shape, DType dtype);
  void reset() { used_bytes_ = 0; }

  size_t used_bytes() const { return used_bytes_; }
  size_t capacity_bytes() const { return storage_->size_bytes(); }
  size_t high_water_bytes() const { return high_water_bytes_; }

 private:
  std::shared_ptr<Storage> storage_;
  size_t used_bytes_ = 0;
  size_t high_water_bytes_ = 0;
};

}  // namespace cairn
