// Not built yet: raises Error(kUnsupported).
#include "backend/cuda/attention.h"
#include "backend/cuda/op_errors.h"

namespace cairn::cuda {

void attention(const Tensor&, const Tensor&, const Tensor&, std::span<const int32_t>,
               std::span<const int32_t>, const ops::AttentionParams&, Tensor&) {
  unsupported("attention", "not built");
}

}  // namespace cairn::cuda
