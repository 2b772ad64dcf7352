#include "backend/cpu/split_columns.h"

#include <cstring>

namespace cairn::ops::cpu {

void split_columns(const Tensor& x, std::span<Tensor* const> parts) {
  const int64_t n = x.dim(0), width = x.dim(1);
  int64_t col = 0;
  for (Tensor* p : parts) {
    const int64_t w = p->dim(1);
    for (int64_t r = 0; r < n; ++r)
      std::memcpy(p->data<float>() + r * w, x.data<float>() + r * width + col,
                  static_cast<size_t>(w) * sizeof(float));
    col += w;
  }
}

}  // namespace cairn::ops::cpu
