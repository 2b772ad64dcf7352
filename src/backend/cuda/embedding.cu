// Not built yet: raises Error(kUnsupported).
#include "backend/cuda/embedding.h"
#include "backend/cuda/op_errors.h"

namespace cairn::cuda {

void embedding(const Tensor&, std::span<const int32_t>, Tensor&) {
  unsupported("embedding", "not built");
}

}  // namespace cairn::cuda
