// Not built yet: raises Error(kUnsupported).
#include "backend/cuda/matmul.h"
#include "backend/cuda/op_errors.h"

namespace cairn::cuda {

void matmul(const Tensor&, const Tensor&, const Tensor*, Tensor&) {
  unsupported("matmul", "not built");
}

}  // namespace cairn::cuda
