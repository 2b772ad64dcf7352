// Affine-quantized K/V rows (ops::KvRowQuant) staged into the attention's shared-memory tiles
// as f32: the kernels' element type T is then a tag (Q8Rows, Q4Rows) instead of a float type.
// A value is decoded as code · scale + bias with an explicit f32 multiply and add (the CPU's
// decode, no fused multiply-add), so the staged tile holds the CPU's decoded values and every
// later step of a row's arithmetic is the full-precision path's.
#pragma once

#include <cstdint>

#include "backend/cuda/attention_math.cuh"
#include "backend/cuda/float_load.cuh"

namespace cairn::cuda::attn {

struct Q8Rows {
  static constexpr int kBits = 8;
};
struct Q4Rows {
  static constexpr int kBits = 4;
};

template <typename T>
constexpr bool kQuantRows = false;
template <>
constexpr bool kQuantRows<Q8Rows> = true;
template <>
constexpr bool kQuantRows<Q4Rows> = true;

// Elements [c, c + 8) of the encoded head row at `row` (c a multiple of 8, inside one group).
// Rows are only 4-byte aligned (row_bytes = codes + 4 bytes per group), so codes are read in
// 4-byte words.
template <int Bits>
__device__ __forceinline__ void decode8(const uint8_t* row, int c, const Params& p, float (&y)[8]) {
  const int n_groups = p.head_dim / p.group_size, g = c / p.group_size;
  const auto* sb = reinterpret_cast<const uint16_t*>(row + p.head_dim * Bits / 8);
  const float s = f16_bits_to_f32(sb[g]), b = f16_bits_to_f32(sb[n_groups + g]);
  uint32_t code[8];
  if constexpr (Bits == 8) {
    const auto* w = reinterpret_cast<const uint32_t*>(row + c);
    const uint32_t lo = w[0], hi = w[1];
#pragma unroll
    for (int e = 0; e < 4; ++e) code[e] = (lo >> (8 * e)) & 0xffu, code[4 + e] = (hi >> (8 * e)) & 0xffu;
  } else {
    const uint32_t u = *reinterpret_cast<const uint32_t*>(row + c / 2);
#pragma unroll
    for (int e = 0; e < 8; ++e) code[e] = (u >> (4 * e)) & 0xfu;  // low nibble first
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) y[e] = __fadd_rn(__fmul_rn(static_cast<float>(code[e]), s), b);
}

// Stages keys [key0, key0 + 32) of KV head kvh as f32 rows of k_s and v_s; keys past n_kv
// become zeros. A thread decodes 8 elements of one key's K row and V row at a time.
template <typename T>
__device__ void load_key_block_quant(const Params& p, float* k_s, float* v_s, int kvh,
                                     int key0) {
  const int chunks = p.head_dim / 8;
  const int64_t token_bytes = static_cast<int64_t>(p.n_kv_heads) * p.row_bytes;
  const auto* k = static_cast<const uint8_t*>(p.k) + static_cast<int64_t>(kvh) * p.row_bytes;
  const auto* v = static_cast<const uint8_t*>(p.v) + static_cast<int64_t>(kvh) * p.row_bytes;
  for (int idx = threadIdx.x; idx < kKeyBlock * chunks; idx += kThreads) {
    const int j = idx / chunks, c = (idx - j * chunks) * 8, key = key0 + j;
    float ky[8] = {}, vy[8] = {};
    if (key < p.n_kv) {
      decode8<T::kBits>(k + key * token_bytes, c, p, ky);
      decode8<T::kBits>(v + key * token_bytes, c, p, vy);
    }
    float* kd = k_s + j * p.stride + c;
    float* vd = v_s + j * p.stride + c;
    *reinterpret_cast<float4*>(kd) = make_float4(ky[0], ky[1], ky[2], ky[3]);
    *reinterpret_cast<float4*>(kd + 4) = make_float4(ky[4], ky[5], ky[6], ky[7]);
    *reinterpret_cast<float4*>(vd) = make_float4(vy[0], vy[1], vy[2], vy[3]);
    *reinterpret_cast<float4*>(vd + 4) = make_float4(vy[4], vy[5], vy[6], vy[7]);
  }
}

}  // namespace cairn::cuda::attn
