// Not built yet: raises Error(kUnsupported).
#include "backend/cuda/op_errors.h"
#include "backend/cuda/rope.h"

namespace cairn::cuda {

void rope(Tensor&, std::span<const int32_t>, const ops::RopeParams&) {
  unsupported("rope", "not built");
}

}  // namespace cairn::cuda
