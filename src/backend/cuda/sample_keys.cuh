// What the sampling kernel computes per element of a row (sample_rows.cu): the
// scaled logit s = l · (1 / temperature) (one f32 multiply, as the CPU), the
// order key of s (the CPU's order: s descending, ties by id), the element's
// probability mass as a fixed-point integer, and its bin. Every pass over a row
// calls these same functions, so a bin's count and mass always equal the sum
// over the elements a later pass finds in it; integer sums make every total
// independent of the order in which threads add.
#pragma once

#include <cstdint>

#include "backend/cuda/float_load.cuh"

namespace cairn::cuda::sampling {

// 512 threads (128 registers each: the passes do not spill), one block per row
// whatever the number of rows.
constexpr int kThreads = 512;
constexpr int kItems = 8;                // sorted candidates per thread
constexpr int kUnroll = 4;               // groups of four elements a thread loads at once
constexpr int kCap = kThreads * kItems;  // candidates sorted in shared memory at most
constexpr int kBins = 2048;              // bins of a row's histogram
constexpr float kSpanNats = 32.0f;       // bins cover s in [m − 32, m]; below: the last bin
// Masses are round(exp(s − m) · 2^40): the max weighs 2^40, a vocabulary below
// 2^24 sums below 2^64, and e^-28 of the max still counts.
constexpr float kMassScale = 1099511627776.0f;
constexpr double kMassUnit = 1.0 / 1099511627776.0;

// One row as the kernel reads it, and what its first pass found.
struct RowView {
  const float* logits;  // [vocab]
  int32_t vocab;
  int32_t id_bits;  // bits of vocab − 1 (at least 1)
  bool vec;         // read as float4
  float inv_t;      // 1 / temperature (1 when greedy)
  float m;          // max s
  float bins_per_nat;
  uint64_t first;  // key64 of the first element of the order
};

// s as the CPU's sort sees it: −0 and +0 compare equal, so both key as +0.
__device__ __forceinline__ float scaled(float l, float inv_t) {
  const float s = __fmul_rn(l, inv_t);
  return s == 0.0f ? 0.0f : s;
}

// Ascending keys for descending s (NaN aside).
__device__ __forceinline__ uint32_t desc_key(float s) {
  const uint32_t u = __float_as_uint(s);
  const uint32_t asc = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return ~asc;
}

__device__ __forceinline__ float key_value(uint32_t key) {
  const uint32_t asc = ~key;
  return __uint_as_float((asc & 0x80000000u) ? (asc & 0x7fffffffu) : ~asc);
}

// The order's key of element id: s descending, then id ascending.
__device__ __forceinline__ uint64_t key64(uint32_t key, int32_t id) {
  return (static_cast<uint64_t>(key) << 32) | static_cast<uint32_t>(id);
}

__device__ __forceinline__ uint64_t mass_of(float s, float m) {
  return __float2ull_rn(__fmul_rn(expf(__fsub_rn(s, m)), kMassScale));
}

// Non-decreasing as s decreases (each step rounds monotonically), so a bin is a
// run of the order; −inf and NaN land in the last bin.
__device__ __forceinline__ int bin_of(float s, const RowView& r) {
  return static_cast<int>(fminf(__fmul_rn(__fsub_rn(r.m, s), r.bins_per_nat), kBins - 1.0f));
}

// Calls f(id, s) for every element of the row: thread t takes groups of four
// elements t, t + kThreads, …, kUnroll groups in flight at a time.
template <typename F>
__device__ __forceinline__ void for_each_element(const RowView& r, F&& f) {
  const int64_t groups = (static_cast<int64_t>(r.vocab) + 3) / 4;
  for (int64_t g0 = threadIdx.x; g0 < groups; g0 += kUnroll * kThreads) {
    float v[kUnroll][4];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (g0 + u * kThreads < groups)
        load_group4(r.logits, g0 + u * kThreads, r.vocab, r.vec, v[u]);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t g = g0 + u * kThreads;
      if (g >= groups) break;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (4 * g + j < r.vocab) f(static_cast<int32_t>(4 * g + j), scaled(v[u][j], r.inv_t));
    }
  }
}

// Combines one value per thread with op (commutative and associative: min,
// max, integer sums), so the result does not depend on the order. Every
// thread must call it; every thread gets the result. scratch: 32 shared words.
template <typename T, typename Op>
__device__ __forceinline__ T block_fold(T v, Op op, T* scratch) {
  for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  T all = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) all = op(all, scratch[w]);
  __syncthreads();
  return all;
}

struct MinOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return b < a ? b : a;
  }
};
struct MaxOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};
struct AddOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a + b;
  }
};

}  // namespace cairn::cuda::sampling
