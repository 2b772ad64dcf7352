#include "core/arena.h"

#include <algorithm>

#include "core/error.h"

namespace cairn {

namespace {
constexpr size_t kArenaAlignment = 64;
}

Arena::Arena(size_t capacity_bytes) : storage_(allocate_host(capacity_bytes)) {}

Tensor Arena::allocate(const Shape& shape, DType dtype) {
  size_t bytes = dtype_bytes(dtype, static_cast<size_t>(shape.numel()));
  size_t start = (used_bytes_ + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  if (start + bytes > capacity_bytes())
    fail(ErrorCode::kOutOfMemory, "arena of {} bytes cannot hold {} {} more bytes",
         capacity_bytes(), shape.to_string(), bytes);
  used_bytes_ = start + bytes;
  high_water_bytes_ = std::max(high_water_bytes_, used_bytes_);
  return Tensor::view_of(storage_, start, shape, dtype);
}

}  // namespace cairn
