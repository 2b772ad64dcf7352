// Block-wide reductions with a fixed tree, for the row kernels (one block per
// row). Each thread first folds its own strided elements in increasing order;
// block_reduce then combines the kThreads partials: within each warp by
// butterfly shuffles (xor 16, 8, 4, 2, 1), then the kThreads / 32 warp results
// by warp 0 the same way. The order depends on kThreads alone, never on the
// grid, so a row's result is the same bits whatever else is in the launch.
#pragma once

#include <cmath>
#include <cstdint>

namespace cairn::cuda {

// Threads per block of a row kernel, a function of the row length d alone (so
// of the row's own shape, never of the number of rows): 1024 for rows of at
// least kLongRow elements (vocabulary-sized softmax), else 256.
constexpr int64_t kLongRow = 16384;
constexpr int kRowThreadsShort = 256;
constexpr int kRowThreadsLong = 1024;

struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return __fadd_rn(a, b); }
  static constexpr float kIdentity = 0.0f;
};

struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
  static constexpr float kIdentity = -INFINITY;
};

template <typename Op>
__device__ __forceinline__ float warp_reduce(float v, Op op) {
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Combines one value per thread of a kThreads block (every thread must call it,
// with the same op); every thread gets the result, lane 0 of warp 0's bits.
// Successive calls may reuse it: the second barrier orders them.
template <int kThreads, typename Op>
__device__ __forceinline__ float block_reduce(float v, Op op) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 32");
  constexpr int kWarps = kThreads / 32;
  __shared__ float partial[kWarps];
  __shared__ float total;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_reduce(v, op);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float w = Op::kIdentity;
    if (lane < kWarps) w = partial[lane];
    w = warp_reduce(w, op);
    if (lane == 0) total = w;
  }
  __syncthreads();
  return total;
}

}  // namespace cairn::cuda
