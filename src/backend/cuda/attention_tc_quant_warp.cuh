// The one-warp blocks' staging of quantized rows (the narrow and 16-row split blocks; the
// other blocks stage units, attention_tc_quant.cuh): the same f16 tiles, with far less
// shared-memory traffic. A key block's raw head rows are copied whole, one after another, to
// the end of the tile:
//   raw row j at kTileBytes − 32·row_bytes + j·row_bytes      (row_bytes ≤ 2·head_dim: they fit)
// by contiguous copies of p.quant_piece bytes (8 where every row allows, else 4; a warp-wide
// copy writes 256 or 128 contiguous bytes, where a unit's four 4-byte copies wrote 16 bytes
// apart), then decoded rows 32 / kChunks at a time from the first: each lane reads its chunk's
// code and scale/bias words of a raw row into registers, the warp syncs, each lane writes its
// f16 chunk. The f16 rows written up to row k end at k·2·head_dim, at or before raw row k's
// start (kTileBytes − (32 − k)·row_bytes), so no step overwrites a raw row not yet read.
#pragma once

#include <cstdint>

#include "backend/cuda/attention_math.cuh"
#include "backend/cuda/attention_tc_quant.cuh"
#include "backend/cuda/mma_tile.cuh"

namespace cairn::cuda::attn::tc {

// 8 bytes global → shared, asynchronously.
__device__ __forceinline__ void copy8(uint32_t dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(src));
}

__device__ __forceinline__ uint32_t load4(uint32_t at) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(at) : "memory");
  return v;
}

template <int HD>
struct WarpRaw {
  static constexpr int kTileBytes = kKeyBlock * HD * 2;
  // The raw rows' start in the tile.
  __device__ static uint32_t start(const Params& p) {
    return static_cast<uint32_t>(kTileBytes - kKeyBlock * p.row_bytes);
  }
};

// Issues the copies of keys [key0, key0 + 32)'s raw rows of KV head kvh, K (values false) or V,
// to the end of `tile`: piece i of the block's rows (p.quant_piece bytes) by lane i % 32, its row
// i / pieces-a-row (p.piece_div) taken from the lane that looked it up. A key past n_kv or of a
// released page gets zeros (code 0, scale 0, bias 0: +0).
template <int HD>
__device__ __forceinline__ void warp_raw_issue(const Params& p, uint8_t* tile, int kvh, int key0,
                                               bool values) {
  const int lane = threadIdx.x & 31, piece = p.quant_piece;
  const int per_row = p.row_bytes / piece, pieces = kKeyBlock * per_row;
  const uint32_t token_bytes = static_cast<uint32_t>(p.n_kv_heads) * p.row_bytes;
  const uint8_t* mine = key0 + lane < p.n_kv ? key_k_row(p, key0 + lane, token_bytes) : nullptr;
  if (mine != nullptr) mine += static_cast<int64_t>(kvh) * p.row_bytes + (values ? v_gap(p) : 0);
  const uint32_t raw = mma::shared_address(tile) + WarpRaw<HD>::start(p);
  for (int i0 = 0; i0 < pieces; i0 += 32) {  // whole warp each round: the shuffle's lanes
    const int i = i0 + lane, j = divide(min(i, pieces - 1), p.piece_div);
    const auto* row = reinterpret_cast<const uint8_t*>(
        __shfl_sync(kFull, reinterpret_cast<unsigned long long>(mine), j));
    if (i >= pieces) continue;
    const int off = (i - j * per_row) * piece;
    const uint32_t dst = raw + static_cast<uint32_t>(j * p.row_bytes + off);
    if (row == nullptr) {
      asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(dst), "r"(0) : "memory");
      if (piece == 8) asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(dst + 4), "r"(0) : "memory");
    } else if (piece == 8) {
      copy8(dst, row + off);
    } else {
      copy4(dst, row + off);
    }
  }
}

// Decodes `tile`'s raw rows into its f16 rows (warp_raw_issue's, once this lane's copies have
// landed; the first __syncwarp hands every lane's pieces over).
template <int HD>
__device__ __forceinline__ void warp_raw_decode(const Params& p, uint8_t* tile) {
  constexpr int kChunks = HD / 8, kRowsAStep = 32 / kChunks;
  static_assert(32 % kChunks == 0, "a warp decodes whole rows a step");
  const int lane = threadIdx.x & 31, c = lane % kChunks;
  const UnitWords w = unit_words(p, group_shift(p), c);
  const uint32_t base = mma::shared_address(tile), raw = base + WarpRaw<HD>::start(p);
#pragma unroll 4
  for (int r0 = 0; r0 < kKeyBlock; r0 += kRowsAStep) {
    const int r = r0 + lane / kChunks;
    const uint32_t at = raw + static_cast<uint32_t>(r * p.row_bytes);
    __syncwarp();  // the raw rows are in (first step), or the last step's writes are done
    const uint32_t w0 = load4(at + w.code), w1 = p.quant_bits == 8 ? load4(at + w.code + 4) : 0u;
    const uint32_t sw = load4(at + w.scale), bw = load4(at + w.bias);
    __syncwarp();  // every lane has read this step's raw rows
    uint32_t y[4];
    decode_words(w0, w1, sw, bw, p.quant_bits, w, y);
    store16(base + tile_chunk<HD, 0>(r, c), y);
  }
}

}  // namespace cairn::cuda::attn::tc
