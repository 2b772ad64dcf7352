#include "backend/cuda/rope_angles.h"

#include <cstdint>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/reduce.cuh"
#include "backend/cuda/rope_math.cuh"
#include "backend/device.h"

namespace cairn::cuda {
namespace {

constexpr int kThreads = 256;

// cs [n_tokens, 2 · half]: token t's row is cos [half], then sin [half] (token_angles' table).
__global__ void angle_table_kernel(float* __restrict__ cs, const int32_t* positions,
                                   const float* inv_freq, int half, float factor, int64_t n_pairs) {
  pdl_enter();
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < n_pairs;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = j / half;
    const int i = static_cast<int>(j % half);
    float* row = cs + t * 2 * half;
    pair_angle(static_cast<float>(positions[t]), inv_freq[i], factor, row[i], row[half + i]);
  }
}

__device__ __forceinline__ float4 load4(const float* p) {
  return *reinterpret_cast<const float4*>(p);
}

// Elements d … d + 3 (d % 4 == 0, d + 4 ≤ 2 · half) of a head row after its rotation, cs the
// token's table: rotated_at's pairs and arithmetic, four at once.
__device__ __forceinline__ float4 rotated4(const float* row, int d, const float* cs, int half,
                                           bool split) {
  if (split) {  // pairs (i, i + half): the quad and its partners are whole float4s
    const bool first = d < half;
    const int i = first ? d : d - half;
    const float4 a = load4(row + i), b = load4(row + i + half);
    const float4 c = load4(cs + i), s = load4(cs + half + i);
    return first ? float4{rotated_a(a.x, b.x, c.x, s.x), rotated_a(a.y, b.y, c.y, s.y),
                          rotated_a(a.z, b.z, c.z, s.z), rotated_a(a.w, b.w, c.w, s.w)}
                 : float4{rotated_b(a.x, b.x, c.x, s.x), rotated_b(a.y, b.y, c.y, s.y),
                          rotated_b(a.z, b.z, c.z, s.z), rotated_b(a.w, b.w, c.w, s.w)};
  }
  const float4 x = load4(row + d);  // pairs (2i, 2i + 1): two whole pairs, i = d / 2 even
  const int i = d / 2;
  const float2 c = *reinterpret_cast<const float2*>(cs + i);
  const float2 s = *reinterpret_cast<const float2*>(cs + half + i);
  return {rotated_a(x.x, x.y, c.x, s.x), rotated_b(x.x, x.y, c.x, s.x),
          rotated_a(x.z, x.w, c.y, s.y), rotated_b(x.z, x.w, c.y, s.y)};
}

// qkv [n_tokens, (h_q + 2 h_kv) · head_dim] → q, k rotated, v copied: a thread a quad (four
// consecutive elements of one head), quads of every token over one grid-stride loop.
__global__ void split_rope_angles_kernel(const float* __restrict__ qkv, QkvHeads o,
                                         const float* __restrict__ cs, int half, bool split,
                                         int64_t n_quads) {
  pdl_enter();
  const int width = (o.h_q + 2 * o.h_kv) * o.head_dim, quads = width / 4;
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < n_quads;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = j / quads;
    const int e = static_cast<int>(j % quads) * 4, h = e / o.head_dim, d = e % o.head_dim;
    const float* row = qkv + t * width + static_cast<int64_t>(h) * o.head_dim;
    const float4 x = h < o.h_q + o.h_kv && d < 2 * half
                         ? rotated4(row, d, cs + t * 2 * half, half, split)
                         : load4(row + d);
    *reinterpret_cast<float4*>(o.out(t, h) + d) = x;
  }
}

// rope.cu's head_sum_squares over a row held in registers: lane l's quads l + 32c (x[c]; zeros
// past the row), each chunk of 32 quads a butterfly, the chunks' sums a second one at lanes 0 …
// chunks − 1: rms_norm_kernel's order at 256 threads.
template <int C>
__device__ __forceinline__ float quad_sum_squares(const float4 (&x)[C], int groups) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  float chunk_sum = 0.0f;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    if (32 * c >= groups) break;  // rope.cu's chunk count, (groups + 31) / 32
    float ss = 0.0f;
    ss = __fmaf_rn(x[c].x, x[c].x, ss), ss = __fmaf_rn(x[c].y, x[c].y, ss);
    ss = __fmaf_rn(x[c].z, x[c].z, ss), ss = __fmaf_rn(x[c].w, x[c].w, ss);
    ss = warp_reduce(ss, SumOp{});
    if (lane == c) chunk_sum = ss;
  }
  return warp_reduce(chunk_sum, SumOp{});
}

// x (quad_sum_squares' registers) RMS-normed with weights w: each element (x · inv) · w, inv =
// 1 / √(Σ x² / head_dim + eps), as rms_norm_kernel.
template <int C>
__device__ __forceinline__ void normed_quads(float4 (&x)[C], const float* w, int hd, float eps) {
  const int lane = static_cast<int>(threadIdx.x & 31), groups = hd / 4;
  const float inv = __frcp_rn(__fsqrt_rn(
      __fadd_rn(__fdiv_rn(quad_sum_squares<C>(x, groups), static_cast<float>(hd)), eps)));
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int g = lane + 32 * c;
    if (g >= groups) continue;
    const float4 wv = load4(w + 4 * g);
    x[c] = {__fmul_rn(__fmul_rn(x[c].x, inv), wv.x), __fmul_rn(__fmul_rn(x[c].y, inv), wv.y),
            __fmul_rn(__fmul_rn(x[c].z, inv), wv.z), __fmul_rn(__fmul_rn(x[c].w, inv), wv.w)};
  }
}

// With head norms: a warp a head row of a token, rope.cu's split_norm_rope_kernel's arithmetic
// on float4s, the token's pairs from the table. Lane l holds the row's quads l + 32c (c < C,
// head_dim ≤ 128C); q and k rows RMS-normed where their weights are given, then through the
// warp's row of shared memory (head_dim floats) to meet their pairs and be rotated; v copied.
template <int C>
__global__ void split_norm_rope_angles_kernel(const float* __restrict__ qkv, QkvHeads o,
                                              HeadNormArgs nrm, const float* __restrict__ cs,
                                              int half, bool split, int64_t n_rows) {
  pdl_enter();
  extern __shared__ float4 rows4[];
  const int hd = o.head_dim, heads = o.h_q + 2 * o.h_kv, groups = hd / 4;
  const int lane = static_cast<int>(threadIdx.x & 31), warps = static_cast<int>(blockDim.x / 32);
  float* buf = reinterpret_cast<float*>(rows4) + static_cast<int>(threadIdx.x / 32) * hd;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * warps + threadIdx.x / 32; j < n_rows;
       j += static_cast<int64_t>(gridDim.x) * warps) {
    const int64_t t = j / heads;
    const int h = static_cast<int>(j % heads);
    const float* row = qkv + j * hd;
    float* dst = o.out(t, h);
    float4 x[C];
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int g = lane + 32 * c;
      x[c] = g < groups ? load4(row + 4 * g) : float4{0.0f, 0.0f, 0.0f, 0.0f};
    }
    const bool rotated = h < o.h_q + o.h_kv;
    const float* w = h < o.h_q ? nrm.q_w : rotated ? nrm.k_w : nullptr;
    if (w != nullptr) normed_quads<C>(x, w, hd, nrm.eps);
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int g = lane + 32 * c;
      if (g < groups) *reinterpret_cast<float4*>((rotated ? buf : dst) + 4 * g) = x[c];
    }
    if (!rotated) continue;  // v: copied (uniform across the warp)
    __syncwarp();
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int d = 4 * (lane + 32 * c);
      if (d >= hd) continue;
      *reinterpret_cast<float4*>(dst + d) =
          d < 2 * half ? rotated4(buf, d, cs + t * 2 * half, half, split) : load4(buf + d);
    }
    __syncwarp();  // the row is rewritten by the warp's next head
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// A grid-stride launch's blocks: enough for every SM's full occupancy, at most one an item.
unsigned grid_for(int64_t items) {
  const int64_t most = static_cast<int64_t>(sm_count()) * (2048 / kThreads) * 4;
  const int64_t want = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(want < most ? want : most);
}

// Quads a lane holds of a head row (1, 2, 4 or 8), or 0 past head_dim 1,024.
int chunks_for(int64_t hd) {
  for (int c = 1; c <= 8; c *= 2)
    if (hd <= 128 * c) return c;
  return 0;
}

// The head-norm split's launch: a warp a head row, its template by the quads a lane holds.
void launch_norm_split(const Tensor& qkv, const QkvHeads& o, const HeadNormArgs& nrm,
                       const float* table, int half, bool split) {
  const int64_t rows = qkv.dim(0) * (o.h_q + 2 * o.h_kv);
  const size_t shared = static_cast<size_t>(kThreads / 32) * o.head_dim * sizeof(float);
  const unsigned grid = grid_for(rows * 32);
  const auto go = [&](auto kernel) {
    launch_kernel("split_norm_rope_angles_kernel", kernel, grid, kThreads, shared,
                  qkv.data<float>(), o, nrm, table, half, split, rows);
  };
  switch (chunks_for(o.head_dim)) {
    case 1:
      return go(split_norm_rope_angles_kernel<1>);
    case 2:
      return go(split_norm_rope_angles_kernel<2>);
    case 4:
      return go(split_norm_rope_angles_kernel<4>);
    default:
      return go(split_norm_rope_angles_kernel<8>);
  }
}

}  // namespace

bool split_rope_by_angles(const Tensor& qkv, std::span<const int32_t> positions,
                          const ops::RopeParams& p, Tensor& q, Tensor& k, Tensor& v,
                          const ops::HeadNorms& norms) {
  const int64_t n = qkv.dim(0), hd = q.dim(2), half = p.rotary_dim / 2;
  const bool split = p.layout == ops::RopeLayout::kHalfSplit;
  if (n < kAngleTableMinTokens || half == 0 || hd % 4 != 0 || half % (split ? 4 : 2) != 0 ||
      2 * half > hd || qkv.dim(1) > 0x7fffffff || n > 0x7fffffff)
    return false;
  if (!aligned16(qkv.raw()) || !aligned16(q.raw()) || !aligned16(k.raw()) || !aligned16(v.raw()))
    return false;
  const HeadNormArgs nrm = head_norm_args(norms);
  if (norms.any() && (chunks_for(hd) == 0 || !aligned16(nrm.q_w) || !aligned16(nrm.k_w)))
    return false;
  if (stream_capturing()) return false;
  Tensor table = empty_on(qkv.device(), {n, 2 * half}, DType::kF32);
  const int64_t pairs = n * half, quads = n * (qkv.dim(1) / 4);
  launch_kernel("angle_table_kernel", angle_table_kernel, grid_for(pairs), kThreads, 0,
                table.data<float>(), upload(positions), upload(p.inv_freq), static_cast<int>(half),
                p.attention_factor, pairs);
  const QkvHeads o = qkv_heads(q, k, v);
  if (norms.any()) {
    launch_norm_split(qkv, o, nrm, table.data<float>(), static_cast<int>(half), split);
    return true;
  }
  launch_kernel("split_rope_angles_kernel", split_rope_angles_kernel, grid_for(quads), kThreads, 0,
                qkv.data<float>(), o, table.data<float>(), static_cast<int>(half), split, quads);
  return true;
}

}  // namespace cairn::cuda
