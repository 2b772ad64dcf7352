// Not built yet: raises Error(kUnsupported).
#include "backend/cuda/norms.h"
#include "backend/cuda/op_errors.h"

namespace cairn::cuda {

void rms_norm(const Tensor&, const Tensor&, float, Tensor&) {
  unsupported("rms_norm", "not built");
}

void layer_norm(const Tensor&, const Tensor&, const Tensor*, float, Tensor&) {
  unsupported("layer_norm", "not built");
}

}  // namespace cairn::cuda
