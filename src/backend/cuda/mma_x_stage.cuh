// The x part of a tensor-core GEMM tile when x arrives in f32 (mma_gemm.cu, kXf32 tiles):
// each thread loads its 16-byte chunks' 8 floats of a k-tile into registers one pipeline
// iteration before it rounds them to the weights' dtype (nearest even, as round_input does)
// and stores them into the tile's swizzled rows, so the loads' latency overlaps a k-tile's
// products instead of a separate rounding launch. Rows at or past n and columns past k are
// skipped, as copy_rows skips them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backend/cuda/mma_tile.cuh"

namespace cairn::cuda::mma {

// Chunk j of this thread: index threadIdx.x + j · threads over the tile's rows × 8 chunks.
template <class C>
struct XRegs {
  static constexpr int kChunks = C::kBM * kChunksPerRow;
  static constexpr int kPerThread = (kChunks + C::kThreads - 1) / C::kThreads;
  float4 v[kPerThread][2];
};

// Whether chunk j of this thread lies in the tile and in x; its row r and chunk c.
template <class C>
__device__ inline bool x_chunk(int j, int row0, int n, int k, int kt, int& r, int& c) {
  const int i = static_cast<int>(threadIdx.x) + j * C::kThreads;
  r = i / kChunksPerRow;
  c = i % kChunksPerRow;
  return i < XRegs<C>::kChunks && row0 + r < n && kt * kTileK + c * 8 < k;
}

template <class C>
__device__ inline void load_x(XRegs<C>& xr, const float* x, int row0, int n, int k, int kt) {
#pragma unroll
  for (int j = 0; j < XRegs<C>::kPerThread; ++j) {
    int r, c;
    if (!x_chunk<C>(j, row0, n, k, kt, r, c)) continue;
    const auto* src = reinterpret_cast<const float4*>(
        x + static_cast<int64_t>(row0 + r) * k + kt * kTileK + c * 8);
    xr.v[j][0] = __ldg(src);
    xr.v[j][1] = __ldg(src + 1);
  }
}

__device__ inline uint32_t pack2(float a, float b, const __nv_bfloat16*) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<uint32_t*>(&h);
}
__device__ inline uint32_t pack2(float a, float b, const __half*) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<uint32_t*>(&h);
}

template <class C, typename T>
__device__ inline void store_x(const XRegs<C>& xr, uint8_t* stage, int row0, int n, int k,
                               int kt) {
#pragma unroll
  for (int j = 0; j < XRegs<C>::kPerThread; ++j) {
    int r, c;
    if (!x_chunk<C>(j, row0, n, k, kt, r, c)) continue;
    const float4 a = xr.v[j][0], b = xr.v[j][1];
    const T* t = nullptr;
    *reinterpret_cast<uint4*>(stage + swizzled(r, c)) =
        make_uint4(pack2(a.x, a.y, t), pack2(a.z, a.w, t), pack2(b.x, b.y, t), pack2(b.z, b.w, t));
  }
}

}  // namespace cairn::cuda::mma
