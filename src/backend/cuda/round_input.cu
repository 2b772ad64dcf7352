#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/op_errors.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/rank_context.h"
#include "backend/cuda/round_input.h"

namespace cairn::cuda {
namespace {

__device__ inline void store(__nv_bfloat16* p, float v) {
  *p = __float2bfloat16_rn(v);
}
__device__ inline void store(__half* p, float v) {
  *p = __float2half_rn(v);
}

// Four elements rounded as store() rounds each, written in one 8-byte store.
__device__ inline void store4(__nv_bfloat16* p, float4 v) {
  const __nv_bfloat162 lo = __floats2bfloat162_rn(v.x, v.y), hi = __floats2bfloat162_rn(v.z, v.w);
  *reinterpret_cast<uint2*>(p) = {*reinterpret_cast<const uint32_t*>(&lo),
                                  *reinterpret_cast<const uint32_t*>(&hi)};
}
__device__ inline void store4(__half* p, float4 v) {
  const __half2 lo = __floats2half2_rn(v.x, v.y), hi = __floats2half2_rn(v.z, v.w);
  *reinterpret_cast<uint2*>(p) = {*reinterpret_cast<const uint32_t*>(&lo),
                                  *reinterpret_cast<const uint32_t*>(&hi)};
}

// out [n] = x [n] rounded: the first 4 · n4 elements a float4 a thread (x 16-byte aligned, out
// 8-byte aligned when n4 > 0), the rest one a thread.
template <typename T>
__global__ void round_kernel(const float* __restrict__ x, T* __restrict__ out, int64_t n,
                             int64_t n4) {
  pdl_enter();
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = first; i < n4; i += stride)
    store4(out + 4 * i, reinterpret_cast<const float4*>(x)[i]);
  for (int64_t i = 4 * n4 + first; i < n; i += stride) store(out + i, x[i]);
}

// The scratch buffer, one a context (rank_context.h); reuse is ordered on stream() after the
// kernels that read it. A buffer outgrown is kept, not freed: captured graphs may still read
// it (each growth at least doubles, so the kept ones add at most the current size).
struct Scratch {
  void* buffer = nullptr;
  size_t capacity = 0;
  std::vector<void*> outgrown;
  std::mutex mutex;
};

void* scratch(size_t bytes) {
  Scratch& s = context_local<Scratch>();
  std::lock_guard<std::mutex> lock(s.mutex);
  void*& buffer = s.buffer;
  size_t& capacity = s.capacity;
  if (bytes <= capacity) return buffer;
  if (stream_capturing())
    unsupported("matmul",
                "its input buffer must grow during graph capture; run the largest "
                "batch once before capturing");
  if (buffer) s.outgrown.push_back(buffer);
  const size_t grown = bytes > 2 * capacity ? bytes : 2 * capacity;
  buffer = nullptr;
  capacity = 0;
  check(cudaMallocAsync(&buffer, grown, stream()), "cudaMallocAsync");
  capacity = grown;
  return buffer;
}

}  // namespace

const void* round_input(const Tensor& x, DType dtype) {
  const int64_t n = x.numel();
  void* out = scratch(static_cast<size_t>(n) * 2);
  if (n == 0) return out;
  if (x.dtype() == dtype) {  // already rounded (a producer wrote it so): a copy, aligned
    check(cudaMemcpyAsync(out, x.raw(), static_cast<size_t>(n) * 2, cudaMemcpyDeviceToDevice,
                          stream()),
          "cudaMemcpyAsync");
    return out;
  }
  const int64_t n4 = reinterpret_cast<uintptr_t>(x.raw()) % 16 == 0 ? n / 4 : 0;
  const int64_t items = n4 > 0 ? n4 : n;
  const unsigned grid = blocks_for(items) > 65535u * 8 ? 65535u * 8 : blocks_for(items);
  if (dtype == DType::kBF16)
    launch_kernel("round_kernel", round_kernel<__nv_bfloat16>, grid, kBlock, 0, x.data<float>(),
                  static_cast<__nv_bfloat16*>(out), n, n4);
  else
    launch_kernel("round_kernel", round_kernel<__half>, grid, kBlock, 0, x.data<float>(),
                  static_cast<__half*>(out), n, n4);
  return out;
}

}  // namespace cairn::cuda
