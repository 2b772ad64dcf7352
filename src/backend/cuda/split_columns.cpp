#include "backend/cuda/split_columns.h"

#include "backend/cuda/cuda_runtime.h"

namespace cairn::cuda {

void split_columns(const Tensor& x, std::span<Tensor* const> parts) {
  const size_t n = static_cast<size_t>(x.dim(0)), pitch = static_cast<size_t>(x.dim(1)) * 4;
  if (n == 0) return;
  size_t at = 0;  // bytes into a row of x
  for (Tensor* p : parts) {
    const size_t w = static_cast<size_t>(p->dim(1)) * 4;
    if (w > 0)
      CAIRN_CUDA_CHECK(cudaMemcpy2DAsync(p->raw(), w, static_cast<const uint8_t*>(x.raw()) + at,
                                         pitch, w, n, cudaMemcpyDeviceToDevice, stream()));
    at += w;
  }
}

}  // namespace cairn::cuda
