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

// The raw bytes of elements [c, c + 8) of one encoded head row: 8 codes in two 4-byte words
// (4-bit codes: the first word only, low nibble first) and their group's f16 scale and bias.
// Rows are only 4-byte aligned (row_bytes = codes + 4 bytes per group): words, not wider loads.
struct RawChunk {
  uint32_t w0 = 0, w1 = 0;
  uint16_t scale = 0, bias = 0;
};

template <int Bits>
__device__ __forceinline__ RawChunk load_chunk(const uint8_t* row, int c, const Params& p) {
  const int n_groups = p.head_dim / p.group_size, g = c / p.group_size;
  const auto* sb = reinterpret_cast<const uint16_t*>(row + p.head_dim * Bits / 8);
  RawChunk r;
  const auto* w = reinterpret_cast<const uint32_t*>(row + c * Bits / 8);
  r.w0 = __ldg(w);
  if constexpr (Bits == 8) r.w1 = __ldg(w + 1);
  r.scale = __ldg(sb + g), r.bias = __ldg(sb + n_groups + g);
  return r;
}

// Element e of a chunk's codes as an f32, exactly: the bits of 2^23 + code (a byte permute of
// the code's byte under 0x4B, or its nibble masked into them) less 2^23 — an add where a
// conversion (I2F, a quarter-rate pipe) took the CUDA-core blocks' issue slots.
template <int Bits>
__device__ __forceinline__ float code_f32(const RawChunk& r, int e) {
  constexpr uint32_t kTwo23 = 0x4B000000u;  // 2^23's bits
  uint32_t bits;
  if constexpr (Bits == 8)
    bits = __byte_perm(e < 4 ? r.w0 : r.w1, kTwo23, 0x7540u | static_cast<uint32_t>(e % 4));
  else
    bits = ((r.w0 >> (4 * e)) & 0xfu) | kTwo23;
  return __fsub_rn(__uint_as_float(bits), 8388608.0f);
}

// code · scale + bias for the chunk's 8 elements, an f32 multiply then an f32 add.
template <int Bits>
__device__ __forceinline__ void decode_chunk(const RawChunk& r, float* dst) {
  const float s = f16_bits_to_f32(r.scale), b = f16_bits_to_f32(r.bias);
  float y[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) y[e] = __fadd_rn(__fmul_rn(code_f32<Bits>(r, e), s), b);
  *reinterpret_cast<float4*>(dst) = make_float4(y[0], y[1], y[2], y[3]);
  *reinterpret_cast<float4*>(dst + 4) = make_float4(y[4], y[5], y[6], y[7]);
}

// A thread's share of a key block's encoded K and V in flight: chunks threadIdx.x + i·kThreads,
// i < S (a block of 32 keys has 4·head_dim ≤ kThreads·S chunks of 8 elements). Chunks past the
// block, keys past n_kv and keys of a released page stay RawChunk{}: they decode to zeros.
template <int S>
struct QuantLoads {
  RawChunk k[S], v[S];
};

// Issues the loads of keys [key0, key0 + 32) of KV head kvh, all in flight together.
template <typename T, int S>
__device__ __forceinline__ void issue_quant(const Params& p, int kvh, int key0, QuantLoads<S>& r) {
  const int chunks = p.head_dim / 8, total = kKeyBlock * chunks;
  const uint32_t token_bytes = static_cast<uint32_t>(p.n_kv_heads) * p.row_bytes;
  const int64_t head_off = static_cast<int64_t>(kvh) * p.row_bytes, gap = v_gap(p);
#pragma unroll
  for (int i = 0; i < S; ++i) {
    r.k[i] = RawChunk{}, r.v[i] = RawChunk{};
    const int idx = threadIdx.x + i * kThreads, j = idx / chunks, key = key0 + j;
    if (idx >= total || key >= p.n_kv) continue;
    const uint8_t* k = key_k_row(p, key, token_bytes);
    if (k == nullptr) continue;  // a released page: never visible
    const int c = (idx - j * chunks) * 8;
    r.k[i] = load_chunk<T::kBits>(k + head_off, c, p);
    r.v[i] = load_chunk<T::kBits>(k + gap + head_off, c, p);
  }
}

// Decodes the loads into f32 rows of k_s and v_s.
template <typename T, int S>
__device__ __forceinline__ void store_quant(const Params& p, float* k_s, float* v_s,
                                            const QuantLoads<S>& r) {
  const int chunks = p.head_dim / 8, total = kKeyBlock * chunks;
#pragma unroll
  for (int i = 0; i < S; ++i) {
    const int idx = threadIdx.x + i * kThreads, j = idx / chunks;
    if (idx >= total) break;
    const int c = (idx - j * chunks) * 8;
    decode_chunk<T::kBits>(r.k[i], k_s + j * p.stride + c);
    decode_chunk<T::kBits>(r.v[i], v_s + j * p.stride + c);
  }
}

}  // namespace cairn::cuda::attn
