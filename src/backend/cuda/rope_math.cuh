// The arithmetic every RoPE kernel shares (rope.cu, rope_angles.cu), so that each gives the
// CPU reference's bits: a pair's angle is the f32 product position × inv_freq[i], its cosine
// and sine taken in double and rounded once, times attention_factor in f32; a pair (a, b)
// rotates with each f32 op rounded on its own (no contraction).
#pragma once

#include <cstdint>

#include "backend/ops.h"
#include "core/tensor.h"

namespace cairn::cuda {

// Pair i's (cos, sin) · factor at `pos`.
__device__ __forceinline__ void pair_angle(float pos, float inv_freq_i, float factor, float& c,
                                           float& s) {
  double sd, cd;
  sincos(static_cast<double>(__fmul_rn(pos, inv_freq_i)), &sd, &cd);
  c = __fmul_rn(static_cast<float>(cd), factor);
  s = __fmul_rn(static_cast<float>(sd), factor);
}

// Token blockIdx.x's cos [half], then sin [half], into shared memory (then a barrier).
__device__ __forceinline__ void token_angles(float* cs, const int32_t* positions,
                                             const float* inv_freq, int half, float factor) {
  const float pos = static_cast<float>(positions[blockIdx.x]);
  for (int i = threadIdx.x; i < half; i += blockDim.x)
    pair_angle(pos, inv_freq[i], factor, cs[i], cs[half + i]);
  __syncthreads();
}

// The rotated pair (a, b) → (a·c − b·s, b·c + a·s), each op rounded on its own.
__device__ __forceinline__ float rotated_a(float a, float b, float c, float s) {
  return __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, s));
}
__device__ __forceinline__ float rotated_b(float a, float b, float c, float s) {
  return __fadd_rn(__fmul_rn(b, c), __fmul_rn(a, s));
}

// Element d of a head row after its rotation (rope_kernel's pairs and arithmetic; cs the
// token's table): dims past 2 · half as they are.
__device__ __forceinline__ float rotated_at(const float* row, int d, const float* cs, int half,
                                            bool split) {
  if (d >= 2 * half) return row[d];
  const bool first = split ? d < half : d % 2 == 0;
  const int i = split ? (first ? d : d - half) : d / 2;
  const float a0 = split ? row[i] : row[2 * i], b0 = split ? row[i + half] : row[2 * i + 1];
  const float c = cs[i], s = cs[half + i];
  return first ? rotated_a(a0, b0, c, s) : rotated_b(a0, b0, c, s);
}

// The heads of one fused q|k|v output row: h_q query heads, then h_kv key heads, then h_kv
// value heads, each head_dim wide.
struct QkvHeads {
  float *q, *k, *v;
  int h_q, h_kv, head_dim;
  // Where head h of token t's row goes.
  __device__ float* out(int64_t t, int h) const {
    return h < h_q          ? q + (t * h_q + h) * head_dim
           : h < h_q + h_kv ? k + (t * h_kv + h - h_q) * head_dim
                            : v + (t * h_kv + h - h_q - h_kv) * head_dim;
  }
};

// The head norms' weights of a split with head norms (rope.cu, rope_angles.cu).
struct HeadNormArgs {
  const float *q_w, *k_w;  // [head_dim] or null: that part is not normed
  float eps;
};

// The kernels' view of ops::HeadNorms (its weights are f32 device tensors).
inline HeadNormArgs head_norm_args(const ops::HeadNorms& n) {
  return {n.q ? n.q->data<float>() : nullptr, n.k ? n.k->data<float>() : nullptr, n.eps};
}

// The heads of q [n, h_q, head_dim], k and v [n, h_kv, head_dim] (contiguous, f32).
inline QkvHeads qkv_heads(Tensor& q, Tensor& k, Tensor& v) {
  return {q.data<float>(),
          k.data<float>(),
          v.data<float>(),
          static_cast<int>(q.dim(1)),
          static_cast<int>(k.dim(1)),
          static_cast<int>(q.dim(2))};
}

}  // namespace cairn::cuda
