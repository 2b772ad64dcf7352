#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/fill.h"
#include "backend/cuda/op_errors.h"
#include "backend/device.h"

namespace cairn::cuda {
namespace {

__device__ inline void store(float* p, float v) {
  *p = v;
}
__device__ inline void store(__nv_bfloat16* p, float v) {
  *p = __float2bfloat16_rn(v);
}
__device__ inline void store(__half* p, float v) {
  *p = __float2half_rn(v);
}

// No fused multiply-add: the host computes lo + (hi - lo) * u with two roundings.
template <typename T>
__global__ void fill_kernel(T* out, int64_t n, uint64_t seed, float lo, float span) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    store(out + i, __fadd_rn(lo, __fmul_rn(span, uniform_at(seed, static_cast<uint64_t>(i)))));
}

}  // namespace

void fill_uniform(Tensor& t, uint64_t seed, float lo, float hi) {
  if (!dtype_is_float(t.dtype()) || !t.is_contiguous())
    invalid_argument("fill_uniform", t.describe() + " must be a contiguous float tensor");
  int64_t n = t.numel();
  if (n == 0) return;
  unsigned grid = blocks_for(n) > 65535u * 8 ? 65535u * 8 : blocks_for(n);
  float span = hi - lo;
  switch (t.dtype()) {
    case DType::kF32:
      fill_kernel<<<grid, kBlock, 0, stream()>>>(t.data<float>(), n, seed, lo, span);
      break;
    case DType::kBF16:
      fill_kernel<<<grid, kBlock, 0, stream()>>>(t.data<__nv_bfloat16>(), n, seed, lo, span);
      break;
    default:
      fill_kernel<<<grid, kBlock, 0, stream()>>>(t.data<__half>(), n, seed, lo, span);
      break;
  }
  check_launch("fill_kernel");
}

}  // namespace cairn::cuda
