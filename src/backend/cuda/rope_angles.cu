#include "backend/cuda/rope_angles.h"

#include <cstdint>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"
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

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// A grid-stride launch's blocks: enough for every SM's full occupancy, at most one an item.
unsigned grid_for(int64_t items) {
  const int64_t most = static_cast<int64_t>(sm_count()) * (2048 / kThreads) * 4;
  const int64_t want = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(want < most ? want : most);
}

}  // namespace

bool split_rope_by_angles(const Tensor& qkv, std::span<const int32_t> positions,
                          const ops::RopeParams& p, Tensor& q, Tensor& k, Tensor& v) {
  const int64_t n = qkv.dim(0), hd = q.dim(2), half = p.rotary_dim / 2;
  const bool split = p.layout == ops::RopeLayout::kHalfSplit;
  if (n < kAngleTableMinTokens || half == 0 || hd % 4 != 0 || half % (split ? 4 : 2) != 0 ||
      2 * half > hd || qkv.dim(1) > 0x7fffffff || n > 0x7fffffff)
    return false;
  if (!aligned16(qkv.raw()) || !aligned16(q.raw()) || !aligned16(k.raw()) || !aligned16(v.raw()))
    return false;
  if (stream_capturing()) return false;
  Tensor table = empty_on(qkv.device(), {n, 2 * half}, DType::kF32);
  const int64_t pairs = n * half, quads = n * (qkv.dim(1) / 4);
  launch_kernel("angle_table_kernel", angle_table_kernel, grid_for(pairs), kThreads, 0,
                table.data<float>(), upload(positions), upload(p.inv_freq), static_cast<int>(half),
                p.attention_factor, pairs);
  const QkvHeads o = qkv_heads(q, k, v);
  launch_kernel("split_rope_angles_kernel", split_rope_angles_kernel, grid_for(quads), kThreads, 0,
                qkv.data<float>(), o, table.data<float>(), static_cast<int>(half), split, quads);
  return true;
}

}  // namespace cairn::cuda
