// The one-warp blocks' staging of quantized rows (the narrow and 16-row split blocks; the
// other blocks stage units, attention_tc_quant.cuh): the same f16 tiles, with far less
// shared-memory traffic. A key block's raw head rows are copied whole, one after another, to
// the end of the tile:
//   raw row j at kTileBytes − 32·row_bytes + j·row_bytes      (row_bytes ≤ 2·head_dim: they fit)
// by contiguous copies of p.quant_piece bytes (8 where every row allows, else 4; a warp-wide
// copy writes 256 or 128 contiguous bytes, where a unit's four 4-byte copies wrote 16 bytes
// apart), then decoded from the first row on, a batch of rows at a time: each lane reads its
// chunk's code and scale/bias words of the batch's raw rows into registers, the warp syncs, each
// lane writes its f16 chunks. The f16 rows written up to row k end at k·2·head_dim, at or before
// raw row k's start (kTileBytes − (32 − k)·row_bytes), so no batch overwrites a raw row not yet
// read.
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

// The copies of pieces [lane, pieces) (a warp-wide stride) when the block's raw rows lie
// token_bytes apart from `first` (lane 0's row): piece i, at byte i · Piece of the raw rows,
// is byte i · Piece − j · row_bytes of row j = i / pieces-a-row, so at first + i · Piece +
// j · (token_bytes − row_bytes). No shuffle and no per-key lookup.
template <int Piece>
__device__ __forceinline__ void warp_raw_linear(const Params& p, uint32_t raw, const uint8_t* first,
                                                uint32_t token_bytes, int pieces) {
  const uint32_t gap = token_bytes - static_cast<uint32_t>(p.row_bytes);
  for (int i = threadIdx.x & 31; i < pieces; i += 32) {
    const uint32_t at = static_cast<uint32_t>(i * Piece);
    const uint32_t j = static_cast<uint32_t>(divide(i, p.piece_div));
    const uint8_t* src = first + (at + j * gap);
    if constexpr (Piece == 8) copy8(raw + at, src);
    if constexpr (Piece == 4) copy4(raw + at, src);
  }
}

// The general case (keys past n_kv, released pages, a page boundary inside the block): piece i
// by lane i % 32, its row i / pieces-a-row (p.piece_div) taken from the lane that looked it up.
// A key past n_kv or of a released page gets zeros (code 0, scale 0, bias 0: +0).
__device__ __forceinline__ void warp_raw_rows(const Params& p, uint32_t raw, const uint8_t* mine,
                                              int pieces) {
  const int lane = threadIdx.x & 31, piece = p.quant_piece, per_row = p.row_bytes / piece;
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

// Issues the copies of a key block's raw rows of KV head kvh, K (values false) or V, to the end
// of `tile`, in pieces of p.quant_piece bytes. mine: this lane's key's K row start in its
// token (key_k_row; null past n_kv or in a released page). When every lane's row is there and
// the 32 lie token_bytes apart (one page, or the contiguous rows: every block of a walk but a
// sequence's last and those across a page boundary), warp_raw_linear, else warp_raw_rows.
template <int HD>
__device__ __forceinline__ void warp_raw_issue(const Params& p, uint8_t* tile, int kvh, bool values,
                                               const uint8_t* mine) {
  const int lane = threadIdx.x & 31, pieces = kKeyBlock * (p.row_bytes / p.quant_piece);
  const uint32_t token_bytes = static_cast<uint32_t>(p.n_kv_heads) * p.row_bytes;
  if (mine != nullptr) mine += static_cast<int64_t>(kvh) * p.row_bytes + (values ? v_gap(p) : 0);
  const uint32_t raw = mma::shared_address(tile) + WarpRaw<HD>::start(p);
  const auto* first = reinterpret_cast<const uint8_t*>(
      __shfl_sync(kFull, reinterpret_cast<unsigned long long>(mine), 0));
  const bool linear = mine != nullptr && mine == first + static_cast<uint64_t>(lane) * token_bytes;
  if (!__all_sync(kFull, linear)) return warp_raw_rows(p, raw, mine, pieces);
  if (p.quant_piece == 8) return warp_raw_linear<8>(p, raw, first, token_bytes, pieces);
  warp_raw_linear<4>(p, raw, first, token_bytes, pieces);
}

// Decodes `tile`'s raw rows into its f16 rows (warp_raw_issue's, once this lane's copies have
// landed), kRowsAStep rows a step, a lane a chunk, for rows of Bits-bit codes (Pair: 8-bit codes
// in 8-aligned rows, read as one 8-byte word pair). The raw words of kBatch steps are read into
// registers between two __syncwarp (the first hands every lane's copies over, or orders the
// last batch's writes before these reads), then decoded and written: kBatch independent chains
// a lane. The rows a batch writes end at or before the next batch's raw rows (file comment).
template <int HD, int Bits, bool Pair>
__device__ __forceinline__ void warp_raw_decode_rows(const Params& p, uint8_t* tile) {
  constexpr int kChunks = HD / 8, kRowsAStep = 32 / kChunks, kBatch = 4;
  static_assert(32 % kChunks == 0 && kKeyBlock % (kRowsAStep * kBatch) == 0, "whole batches");
  const int lane = threadIdx.x & 31, c = lane % kChunks;
  const UnitWords w = unit_words(p, group_shift(p), c);
  const uint32_t base = mma::shared_address(tile);
  const uint32_t raw = base + WarpRaw<HD>::start(p) + (lane / kChunks) * p.row_bytes;
  const uint32_t step_bytes = static_cast<uint32_t>(kRowsAStep * p.row_bytes);
#pragma unroll 1
  for (int r0 = 0; r0 < kKeyBlock; r0 += kRowsAStep * kBatch) {
    uint32_t w0[kBatch], w1[kBatch], sw[kBatch], bw[kBatch];
    __syncwarp();
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const uint32_t at = raw + (r0 / kRowsAStep + k) * step_bytes;
      if constexpr (Pair) {
        asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n"
                     : "=r"(w0[k]), "=r"(w1[k])
                     : "r"(at + w.code)
                     : "memory");
      } else {
        w0[k] = load4(at + w.code), w1[k] = Bits == 8 ? load4(at + w.code + 4) : 0u;
      }
      sw[k] = load4(at + w.scale), bw[k] = load4(at + w.bias);
    }
    __syncwarp();  // every lane has read this batch's raw rows
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      uint32_t y[4];
      decode_words(w0[k], w1[k], sw[k], bw[k], Bits, w, y);
      store16(base + tile_chunk<HD, 0>(r0 + k * kRowsAStep + lane / kChunks, c), y);
    }
  }
}

// warp_raw_decode_rows for the call's rows: one branch a tile, none in the loop.
template <int HD>
__device__ __forceinline__ void warp_raw_decode(const Params& p, uint8_t* tile) {
  if (p.quant_bits == 4) return warp_raw_decode_rows<HD, 4, false>(p, tile);
  if (p.quant_piece == 8) return warp_raw_decode_rows<HD, 8, true>(p, tile);
  warp_raw_decode_rows<HD, 8, false>(p, tile);
}

}  // namespace cairn::cuda::attn::tc
