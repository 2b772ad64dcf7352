#include "backend/cpu/reference/reference.h"

namespace cairn::ops::ref {

void embedding(const Tensor& table, std::span<const int32_t> ids, Tensor& y) {
  const int64_t d = table.dim(1);
  float* yd = y.data<float>();
  for (size_t i = 0; i < ids.size(); ++i)
    for (int64_t c = 0; c < d; ++c)
      yd[static_cast<int64_t>(i) * d + c] = load_as_f32(table.raw(), table.dtype(), ids[i] * d + c);
}

}  // namespace cairn::ops::ref
