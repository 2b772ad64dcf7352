// Not built yet: raises Error(kUnsupported).
#include "backend/cuda/elementwise.h"
#include "backend/cuda/op_errors.h"

namespace cairn::cuda {

void add(const Tensor&, const Tensor&, Tensor&) {
  unsupported("add", "not built");
}

void scale(Tensor&, float) {
  unsupported("scale", "not built");
}

void softcap(Tensor&, float) {
  unsupported("softcap", "not built");
}

}  // namespace cairn::cuda
