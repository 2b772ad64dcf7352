// Which staging a tensor-core block's K/V tiles take: rows of the kernel's T
// (attention_tc_stage.cuh), or, in the f16 kernels, quantized rows decoded into f16 tiles — by
// units in the multi-warp and warpgroup blocks (attention_tc_quant.cuh), whole raw rows in the
// one-warp blocks (attention_tc_quant_warp.cuh). Every form gives the same tile.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "backend/cuda/attention_math.cuh"
#include "backend/cuda/attention_tc_quant.cuh"
#include "backend/cuda/attention_tc_quant_warp.cuh"
#include "backend/cuda/attention_tc_stage.cuh"
#include "backend/cuda/mma_tile.cuh"

namespace cairn::cuda::attn::tc {

// Quantized rows are staged as f16 tiles, so only the f16 kernels read them: the bf16 kernels
// compile without their staging (the same registers as before it).
template <typename T>
constexpr bool kReadsQuantized = std::is_same_v<T, __half>;

template <typename T>
__device__ __forceinline__ bool quantized(const Params& p) {
  if constexpr (kReadsQuantized<T>) return p.quant_bits != 0;
  return false;
}

// stage_half for rows of T or, in the f16 kernels, quantized rows (staged whole: stage_quant).
template <typename T, int HD, int NT, int SlabRows = 0>
__device__ __forceinline__ void stage_half_of(const Params& p, uint8_t* tile, int kvh, int key0,
                                              bool values) {
  if (quantized<T>(p)) return stage_quant<HD, NT, SlabRows>(p, tile, kvh, key0, values);
  stage_half<HD, NT, SlabRows>(p, tile, kvh, key0, values);
}

// The K row start of key key0 + lane in its token (key_k_row), null past n_kv or in a released
// page: a one-warp block's lookup of a key block, done once for its K and V tiles (and early:
// the walks look the next block up while this one is attended).
template <typename T, int HD>
__device__ __forceinline__ const uint8_t* lane_key_row(const Params& p, int key0) {
  const int key = key0 + static_cast<int>(threadIdx.x & 31);
  const int row_bytes = quantized<T>(p) ? p.row_bytes : HD * 2;
  const uint32_t token_bytes = static_cast<uint32_t>(p.n_kv_heads) * row_bytes;
  return key < p.n_kv ? key_k_row(p, key, token_bytes) : nullptr;
}

// issue_half of a one-warp block from its lanes' rows (lane_key_row of key0).
template <typename T, int HD>
__device__ __forceinline__ void issue_half_rows(const Params& p, uint8_t* tile, int kvh, int key0,
                                                bool values, const uint8_t* mine) {
  if (quantized<T>(p)) return warp_raw_issue<HD>(p, tile, kvh, values, mine);
  if (!p.vec_loads) return stage_elements<HD, 32>(p, tile, kvh, key0, values);
  stage_chunks_rows<HD>(p, tile, kvh, values, mine);
}

// Staging in two steps, so that a quantized tile's copies stay in flight like the others':
// issue_half (stage_half's copies, or a quantized tile's raw units: quant_issue),
// then, once the caller's wait has seen this thread's copies land, landed_half (the quantized
// units decoded in place by the threads that copied them; nothing for other rows), before the
// barrier that hands the tile over. The same tile either way.
// A one-warp block (NT 32) stages a quantized tile by whole raw rows, the others by units.
template <typename T, int HD, int NT>
__device__ __forceinline__ void issue_half(const Params& p, uint8_t* tile, int kvh, int key0,
                                           bool values) {
  if constexpr (NT == 32)
    if (quantized<T>(p))
      return issue_half_rows<T, HD>(p, tile, kvh, key0, values, lane_key_row<T, HD>(p, key0));
  if (!quantized<T>(p)) return stage_half<HD, NT>(p, tile, kvh, key0, values);
  quant_issue<HD, NT>(p, tile, kvh, key0, values);
}

template <typename T, int HD, int NT>
__device__ __forceinline__ void landed_half(const Params& p, uint8_t* tile) {
  if (!quantized<T>(p)) return;
  if constexpr (NT == 32) return warp_raw_decode<HD>(p, tile);
  quant_decode<HD, NT>(p, tile);
}

// The same for a key block's K and V (V's tile right after K's, as stage_tile).
template <typename T, int HD, int NT>
__device__ __forceinline__ void issue_tile(const Params& p, uint8_t* tile, int kvh, int key0) {
  if (!quantized<T>(p)) return stage_tile<HD, NT>(p, tile, kvh, key0);
  quant_issue<HD, NT>(p, tile, kvh, key0, false);
  quant_issue<HD, NT>(p, tile + Layout<HD>::kKvTile, kvh, key0, true);
}

template <typename T, int HD, int NT>
__device__ __forceinline__ void landed_tile(const Params& p, uint8_t* tile) {
  if (!quantized<T>(p)) return;
  quant_decode<HD, NT>(p, tile);
  quant_decode<HD, NT>(p, tile + Layout<HD>::kKvTile);
}

}  // namespace cairn::cuda::attn::tc
