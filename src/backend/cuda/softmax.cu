// Not built yet: raises Error(kUnsupported).
#include "backend/cuda/op_errors.h"
#include "backend/cuda/softmax.h"

namespace cairn::cuda {

void softmax(const Tensor&, Tensor&) {
  unsupported("softmax", "not built");
}

void log_softmax(const Tensor&, Tensor&) {
  unsupported("log_softmax", "not built");
}

}  // namespace cairn::cuda
