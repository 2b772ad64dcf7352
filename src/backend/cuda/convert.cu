// Not built yet: raises Error(kUnsupported).
#include "backend/cuda/convert.h"
#include "backend/cuda/op_errors.h"

namespace cairn::cuda {

void convert(const Tensor&, Tensor&) {
  unsupported("convert", "not built");
}

}  // namespace cairn::cuda
