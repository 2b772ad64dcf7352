// Affine-quantized K/V rows (ops::KvRowQuant) staged into the tensor-core blocks' tiles as f16,
// so that quantized rows take the f16 rows' tensor-core arithmetic (attention_tc_math.cuh) in
// every grid: element d of a key's head row is staged as
//   RN_f16(code_d · scale_g + bias_g)      one f16 fused multiply-add (fma.rn.f16x2)
// of exact f16 operands (a code of 4 or 8 bits is exact in f16; scale and bias are stored as f16),
// a function of the row's bytes alone. Whatever block stages a row (split, narrow, four-warp,
// fused, warpgroup), its tile holds the same values, so a query's bits stay those of one
// arithmetic (docs/determinism.md). The staged value is within half an f16 ulp (2^-11 relative)
// of the f32 decode (the CPU's and the CUDA-core blocks'), far inside one code step of the
// group. A row whose decode overflows f16 (|code · scale + bias| ≥ 65520) stages ±∞.
//
// A unit is one 16-byte chunk of a tile row (key j, dims 8c .. 8c + 7). Its raw bytes are copied
// into that very chunk by cp.async (4-byte copies: rows are only 4-byte aligned):
//   [code word 0][code word 1 (8-bit; 4-bit: unused)][the word holding scale_g][... bias_g]
// and, once the copies have landed, the thread that issued them decodes the chunk in place. A
// chunk is read and written by one thread only, so no barrier is needed before the caller's.
// A key past n_kv or of a released page stages 16 zero bytes, which decode to +0.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "backend/cuda/attention_math.cuh"
#include "backend/cuda/attention_tc_math.cuh"
#include "backend/cuda/attention_tc_stage.cuh"
#include "backend/cuda/mma_tile.cuh"

namespace cairn::cuda::attn::tc {

// 4 bytes global → shared, asynchronously (cached in L1: a group's scale and bias words are
// read by every thread of the group's chunks).
__device__ __forceinline__ void copy4(uint32_t dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src));
}

// Where chunk c's bytes lie in a head row: its code word(s), the 4-byte-aligned words holding
// its group's scale and bias, and the bit shift of each value in its word. group_shift:
// log2(group_size) (32, 64 or 128).
struct UnitWords {
  int code, scale, bias;
  int scale_shift, bias_shift;
};

__device__ __forceinline__ UnitWords unit_words(const Params& p, int group_shift, int c) {
  const int g = (c * 8) >> group_shift, n_groups = p.head_dim >> group_shift;
  const int codes = p.head_dim * p.quant_bits / 8;
  const int s = codes + 2 * g, b = codes + 2 * (n_groups + g);
  return {c * p.quant_bits, s & ~3, b & ~3, (s & 2) * 8, (b & 2) * 8};
}

__device__ __forceinline__ int group_shift(const Params& p) {
  return __ffs(p.group_size) - 1;
}

// A thread's units: chunk c = t % kChunks of tile rows t / kChunks + kRowsApart·i. NT (32, 128
// or 256) is a multiple of kChunks at every head_dim, so a thread's chunk, and with it its
// UnitWords, is fixed (one set of offsets, not one a unit, across a walk); consecutive threads
// take consecutive chunks of a row (coalesced code words).
template <int HD, int NT>
struct Units {
  static constexpr int kChunks = HD / 8, kRowsApart = NT / kChunks;
  static constexpr int kEach = kKeyBlock / kRowsApart;
  static_assert(NT % kChunks == 0 && kKeyBlock % kRowsApart == 0, "a thread's chunk is fixed");
  __device__ static int chunk() { return static_cast<int>(threadIdx.x) % NT % kChunks; }
  __device__ static int row(int i) {
    return static_cast<int>(threadIdx.x) % NT / kChunks + i * kRowsApart;
  }
};

// Issues the copies of the units of keys [key0, key0 + 32) of KV head kvh, K (values false) or
// V, into `tile` (laid out as tile_chunk<HD, SlabRows>) by the block's NT threads (whole warps);
// quant_decode finishes them. Lane l looks up key key0 + l's row once, and the lanes copying
// that row's chunks take it by a shuffle.
template <int HD, int NT, int SlabRows = 0>
__device__ __forceinline__ void quant_issue(const Params& p, uint8_t* tile, int kvh, int key0,
                                            bool values) {
  using U = Units<HD, NT>;
  const int c = U::chunk(), lane = threadIdx.x & 31;
  const UnitWords w = unit_words(p, group_shift(p), c);
  const uint32_t token_bytes = static_cast<uint32_t>(p.n_kv_heads) * p.row_bytes;
  const uint8_t* mine = key0 + lane < p.n_kv ? key_k_row(p, key0 + lane, token_bytes) : nullptr;
  if (mine != nullptr) mine += static_cast<int64_t>(kvh) * p.row_bytes + (values ? v_gap(p) : 0);
  const uint32_t base = mma::shared_address(tile);
#pragma unroll
  for (int i = 0; i < U::kEach; ++i) {
    const int j = U::row(i);
    const auto* row = reinterpret_cast<const uint8_t*>(
        __shfl_sync(kFull, reinterpret_cast<unsigned long long>(mine), j));
    const uint32_t dst = base + tile_chunk<HD, SlabRows>(j, c);
    if (row == nullptr) {
      mma::zero16(dst);
      continue;
    }
    copy4(dst, row + w.code);
    if (p.quant_bits == 8) copy4(dst + 4, row + w.code + 4);
    copy4(dst + 8, row + w.scale);
    copy4(dst + 12, row + w.bias);
  }
}

// A value's f16 bits from its word (shift 0: the low half, 16: the high), paired with itself:
// one byte permute (its selector is the same for every row of a chunk, so hoisted from loops).
__device__ __forceinline__ __half2 half_pair(uint32_t word, int shift) {
  const uint32_t h = __byte_perm(word, 0u, shift != 0 ? 0x3232u : 0x1010u);
  return *reinterpret_cast<const __half2*>(&h);
}

// Codes 2k and 2k + 1 of a unit as the f16 pair (1024 + code) (the code under 1024's bits,
// 0x6400), in element order.
__device__ __forceinline__ void code_pairs(uint32_t w0, uint32_t w1, int bits, uint32_t (&x)[4]) {
  constexpr uint32_t kHigh = 0x64646464u;
  if (bits == 4) {  // nibbles, low first: lo holds codes 0, 2, 4, 6, hi codes 1, 3, 5, 7
    const uint32_t lo = w0 & 0x0f0f0f0fu, hi = (w0 >> 4) & 0x0f0f0f0fu;
    w0 = __byte_perm(lo, hi, 0x5140), w1 = __byte_perm(lo, hi, 0x7362);
  }
  x[0] = __byte_perm(w0, kHigh, 0x4140), x[1] = __byte_perm(w0, kHigh, 0x4342);
  x[2] = __byte_perm(w1, kHigh, 0x4140), x[3] = __byte_perm(w1, kHigh, 0x4342);
}

// A unit's raw words (code words w0, w1; the words holding its scale and bias) decoded: four f16
// pairs RN_f16(code · scale + bias), in element order.
__device__ __forceinline__ void decode_words(uint32_t w0, uint32_t w1, uint32_t sw, uint32_t bw,
                                             int bits, const UnitWords& w, uint32_t (&y)[4]) {
  const __half2 s = half_pair(sw, w.scale_shift), b = half_pair(bw, w.bias_shift);
  const __half2 k1024 = __float2half2_rn(1024.0f);
  uint32_t x[4];
  code_pairs(w0, w1, bits, x);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const __half2 code = __hsub2(*reinterpret_cast<const __half2*>(&x[k]), k1024);  // exact
    const __half2 v = __hfma2(code, s, b);
    y[k] = *reinterpret_cast<const uint32_t*>(&v);
  }
}

__device__ __forceinline__ void store16(uint32_t at, const uint32_t (&y)[4]) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(at), "r"(y[0]), "r"(y[1]),
               "r"(y[2]), "r"(y[3])
               : "memory");
}

// Decodes one unit in place.
__device__ __forceinline__ void decode_unit(uint32_t at, int bits, const UnitWords& w) {
  uint32_t w0, w1, sw, bw, y[4];
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(w0), "=r"(w1), "=r"(sw), "=r"(bw)
               : "r"(at)
               : "memory");
  decode_words(w0, w1, sw, bw, bits, w, y);
  store16(at, y);
}

// Decodes this thread's units of `tile` (quant_issue's, once its copies have landed).
template <int HD, int NT, int SlabRows = 0>
__device__ __forceinline__ void quant_decode(const Params& p, uint8_t* tile) {
  using U = Units<HD, NT>;
  const int c = U::chunk();
  const UnitWords w = unit_words(p, group_shift(p), c);
  const uint32_t base = mma::shared_address(tile);
#pragma unroll
  for (int i = 0; i < U::kEach; ++i)
    decode_unit(base + tile_chunk<HD, SlabRows>(U::row(i), c), p.quant_bits, w);
}

// The key block staged and decoded at once: issue, wait for every copy of this thread, decode.
template <int HD, int NT, int SlabRows = 0>
__device__ __forceinline__ void stage_quant(const Params& p, uint8_t* tile, int kvh, int key0,
                                            bool values) {
  quant_issue<HD, NT, SlabRows>(p, tile, kvh, key0, values);
  mma::commit();
  mma::wait_pending<0>();
  quant_decode<HD, NT, SlabRows>(p, tile);
}

}  // namespace cairn::cuda::attn::tc
