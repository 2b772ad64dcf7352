// Not built yet: raises Error(kUnsupported).
#include "backend/cuda/gated_activation.h"
#include "backend/cuda/op_errors.h"

namespace cairn::cuda {

void gated_activation(const Tensor&, const Tensor&, ops::Activation, Tensor&) {
  unsupported("gated_activation", "not built");
}

}  // namespace cairn::cuda
