// The thin products' tails (mma_thin.h, ThinTail): the row op that follows a product, run by
// the product's own blocks instead of a kernel of its own, so a decode step of few rows has
// one launch (and one wait on the launch ahead) fewer at each.
//   - kAddNorm: each block adds its outputs into the residual row (res += y, add's arithmetic)
//     in place of storing y; the last block of a row group to arrive normalizes the group's
//     rows as rms_norm_kernel (norms.cu) does: 256 threads, thread t folding groups of 4 t,
//     t + 256, … in increasing order, block_reduce's tree, then (x · inv) · w rounded as
//     stored. A block of R threads plays those 256: its thread t plays threads t + R·j, whose
//     warps' butterflies are its own warp's shuffles, lane for lane. So the bits of add_rms_norm.
//   - kGated: every block stores y; of the two blocks holding a pair's gate and up columns, the
//     second to arrive applies the activation (gated_math.cuh) to the pair's columns.
// Which block arrives last changes no value: it computes from every block's finished outputs.
#pragma once

#include "backend/cuda/arrival.cuh"
#include "backend/cuda/gated_math.cuh"
#include "backend/cuda/mma_thin.h"
#include "backend/cuda/reduce.cuh"
#include "backend/cuda/rounded_store.cuh"

namespace cairn::cuda {

// The element (row, col) of a thin product: stored into y, or with a tail added into res.
__device__ __forceinline__ void thin_store(const ThinProblem& p, int row, int col, float v) {
  if (p.bias) v = v + p.bias[col];
  const int64_t at = static_cast<int64_t>(row) * p.m + col;
  if (p.tail.kind == ThinTail::kAddNorm)
    p.tail.res[at] = __fadd_rn(p.tail.res[at], v);
  else
    p.y[at] = v;
}

template <typename TY>
__device__ __forceinline__ void tail_store(void* h, int64_t row, int d, int g, float4 v) {
  const float f[4] = {v.x, v.y, v.z, v.w};
  store_group4_as(static_cast<TY*>(h) + row * d, g, d, true, f);
}

// out's element `at` (of its dtype code) = v rounded.
__device__ __forceinline__ void tail_store1(const ThinTail& t, int64_t at, float v) {
  if (t.out_dtype == 1)
    static_cast<__nv_bfloat16*>(t.out)[at] = rounded<__nv_bfloat16>(v);
  else if (t.out_dtype == 2)
    static_cast<__half*>(t.out)[at] = rounded<__half>(v);
  else
    static_cast<float*>(t.out)[at] = v;
}

// Row `row` of res normalized into h by the block's R threads; red: 9 floats of shared memory.
template <int R>
__device__ void tail_norm_row(const ThinTail& t, int d, int64_t row, float* red) {
  constexpr int V = kRowThreadsShort / R, G = kTailGroups;
  static_assert(kRowThreadsShort % R == 0 && R % 32 == 0);
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int groups = d / 4;
  const float4* x = reinterpret_cast<const float4*>(t.res + row * d);
  float4 v[V][G];  // (the weights loaded with them would hold the kernel to ~160 registers)
#pragma unroll
  for (int j = 0; j < V; ++j)
#pragma unroll
    for (int i = 0; i < G; ++i)
      if (const int g = tid + R * j + kRowThreadsShort * i; g < groups)
        v[j][i] = __ldcg(x + g);  // other blocks' sums: through L2
#pragma unroll
  for (int j = 0; j < V; ++j) {
    float ss = 0.0f;
#pragma unroll
    for (int i = 0; i < G; ++i) {
      if (tid + R * j + kRowThreadsShort * i >= groups) continue;
      ss = __fmaf_rn(v[j][i].x, v[j][i].x, ss), ss = __fmaf_rn(v[j][i].y, v[j][i].y, ss);
      ss = __fmaf_rn(v[j][i].z, v[j][i].z, ss), ss = __fmaf_rn(v[j][i].w, v[j][i].w, ss);
    }
    ss = warp_reduce(ss, SumOp{});
    if (lane == 0) red[warp + R / 32 * j] = ss;  // the played warp's partial
  }
  __syncthreads();
  if (warp == 0) {  // block_reduce's second level
    float s = lane < kRowThreadsShort / 32 ? red[lane] : SumOp::kIdentity;
    s = warp_reduce(s, SumOp{});
    if (lane == 0) red[8] = s;
  }
  __syncthreads();
  const float ss = red[8];
  const float inv = __frcp_rn(__fsqrt_rn(__fadd_rn(__fdiv_rn(ss, static_cast<float>(d)), t.eps)));
#pragma unroll
  for (int j = 0; j < V; ++j)
#pragma unroll
    for (int i = 0; i < G; ++i) {
      const int g = tid + R * j + kRowThreadsShort * i;
      if (g >= groups) continue;
      const float4 a = v[j][i], b = __ldg(reinterpret_cast<const float4*>(t.norm) + g);
      const float4 y = {__fmul_rn(__fmul_rn(a.x, inv), b.x), __fmul_rn(__fmul_rn(a.y, inv), b.y),
                        __fmul_rn(__fmul_rn(a.z, inv), b.z), __fmul_rn(__fmul_rn(a.w, inv), b.w)};
      if (t.out_dtype == 1)
        tail_store<__nv_bfloat16>(t.out, row, d, g, y);
      else if (t.out_dtype == 2)
        tail_store<__half>(t.out, row, d, g, y);
      else
        tail_store<float>(t.out, row, d, g, y);
    }
  __syncthreads();  // red is the next row's
}

// The gated tail of the pair this block belongs to, columns [c0, c0 + BN) of each half.
template <int BN>
__device__ void tail_gated(const ThinProblem& p, int row0, int rows) {
  const int half = static_cast<int>(gridDim.x) / 2, pair = static_cast<int>(blockIdx.x) % half;
  if (!arrive_last(p.tail.arrivals + blockIdx.y * half + pair, 2)) return;
  const int f = p.m / 2, c0 = pair * BN, n = min(rows, p.n - row0);
  for (int i = static_cast<int>(threadIdx.x); i < n * BN; i += static_cast<int>(blockDim.x)) {
    const int64_t r = row0 + i / BN, c = c0 + i % BN;
    const float g = __ldcg(p.y + r * p.m + c), u = __ldcg(p.y + r * p.m + f + c);
    tail_store1(p.tail, r * f + c, p.tail.act == 0 ? SiluGate{}(g, u) : GeluTanhGate{}(g, u));
  }
}

// The block's tail, if the product has one (every thread of every block calls it last);
// smem: the block's shared memory, free by now.
template <int R, int BN>
__device__ __forceinline__ void thin_tail(const ThinProblem& p, int row0, int rows, uint8_t* smem) {
  if (p.tail.kind == ThinTail::kGated) return tail_gated<BN>(p, row0, rows);
  if (p.tail.kind != ThinTail::kAddNorm) return;
  if (!arrive_last(p.tail.arrivals + blockIdx.y, gridDim.x)) return;
  float* red = reinterpret_cast<float*>(smem);
  for (int r = 0; r < min(rows, p.n - row0); ++r) tail_norm_row<R>(p.tail, p.m, row0 + r, red);
}

}  // namespace cairn::cuda
