// Grid-stride kernels applying a functor to every element of contiguous f32
// buffers: y[i] = op(a[i], b[i]) or x[i] = op(x[i]). Each element is its own
// computation (no reduction), so neither the grid nor the float4 reads (taken
// when every buffer is 16-byte aligned) change a result. y may alias a or b.
#pragma once

#include <cstdint>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/float_load.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"

namespace cairn::cuda {

// Enough blocks to fill the device several times over; threads loop past it.
inline unsigned pointwise_grid(int64_t n) {
  const unsigned want = blocks_for(n);
  return want < 4096u ? want : 4096u;
}

template <typename Op>
__global__ void binary_kernel(const float* a, const float* b, float* y, int64_t n, bool vec,
                              Op op) {
  pdl_enter();
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t head = 0;  // elements done as float4
  if (vec) {
    head = n / 4 * 4;
    const float4 *a4 = reinterpret_cast<const float4*>(a), *b4 = reinterpret_cast<const float4*>(b);
    for (int64_t i = first; i < n / 4; i += stride) {
      const float4 p = a4[i], q = b4[i];
      reinterpret_cast<float4*>(y)[i] =
          make_float4(op(p.x, q.x), op(p.y, q.y), op(p.z, q.z), op(p.w, q.w));
    }
  }
  for (int64_t i = head + first; i < n; i += stride) y[i] = op(a[i], b[i]);
}

template <typename Op>
__global__ void unary_kernel(float* x, int64_t n, bool vec, Op op) {
  pdl_enter();
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t head = 0;
  if (vec) {
    head = n / 4 * 4;
    float4* x4 = reinterpret_cast<float4*>(x);
    for (int64_t i = first; i < n / 4; i += stride) {
      const float4 p = x4[i];
      x4[i] = make_float4(op(p.x), op(p.y), op(p.z), op(p.w));
    }
  }
  for (int64_t i = head + first; i < n; i += stride) x[i] = op(x[i]);
}

// Launches on stream() (launch_kernel: a failed launch throws).
template <typename Op>
void launch_binary(const float* a, const float* b, float* y, int64_t n, Op op) {
  if (n == 0) return;
  const bool vec = aligned16(a) && aligned16(b) && aligned16(y);
  launch_kernel("binary_kernel", binary_kernel<Op>, pointwise_grid(n), kBlock, 0, a, b, y, n, vec,
                op);
}

template <typename Op>
void launch_unary(float* x, int64_t n, Op op) {
  if (n == 0) return;
  launch_kernel("unary_kernel", unary_kernel<Op>, pointwise_grid(n), kBlock, 0, x, n, aligned16(x),
                op);
}

}  // namespace cairn::cuda
