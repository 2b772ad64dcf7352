// The matmul blocking, written once over a vector traits class V and included
// by each per-ISA kernel file. Everything here has internal linkage, so code
// compiled for one ISA can never be merged into another's by the linker.
//
// V provides: type T; kLanes; kRows, kCols (register tile); zero(); load(const
// float*); load_w<DType>(const void*, offset); load_partial(const float*, n)
// and load_w_partial<DType>(base, offset, n) (zero padded); fma(a, b, acc);
// store(float*, T); hsum(T) (halving order, see kernels.h).
#pragma once

#include <cstdint>
#include <cstdlib>

#include "backend/cpu/fast/kernels.h"

namespace cairn::ops::fast {
namespace {

struct TileArgs {
  const float* x;  // first x row of the tile; rows ldx apart
  int64_t ldx;
  const void* w;  // first w row of the tile (elements ldw apart), dtype of the kernel
  int64_t ldw;
  int64_t k_begin, k_end;  // k_begin is a multiple of the lane count
  bool first, last;        // first block starts from zero; last one finishes into y
  float* acc;              // [rows][cols][lanes]: partial sums between k blocks
  float* y;                // y tile, rows ldy apart
  int64_t ldy;
  const float* bias;  // bias of the tile's columns, or null
  // Distance between the tile's columns in y and bias (1 but in GEMV, whose
  // tiles take rows far apart so that each streams through memory in order).
  int64_t ldc = 1;
  int64_t prefetch = 0;  // bytes ahead of each weight stream to prefetch (0: none)
};

template <class V, int R, int C, DType WT>
void tile(const TileArgs& a) {
  constexpr int L = V::kLanes;
  typename V::T acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = a.first ? V::zero() : V::load(a.acc + (r * C + c) * L);
  const int64_t full_end = a.k_begin + (a.k_end - a.k_begin) / L * L;
  int64_t k0 = a.k_begin;
  constexpr int64_t kWBytes = WT == DType::kF32 ? 4 : 2;
  for (; k0 < full_end; k0 += L) {
    if (a.prefetch > 0 && (k0 * kWBytes) % 64 == 0)  // one line a stream, a.prefetch bytes on
      for (int c = 0; c < C; ++c)
        __builtin_prefetch(static_cast<const char*>(a.w) + (c * a.ldw + k0) * kWBytes + a.prefetch);
    typename V::T xv[R];
    for (int r = 0; r < R; ++r) xv[r] = V::load(a.x + r * a.ldx + k0);
    for (int c = 0; c < C; ++c) {
      const typename V::T wv = V::template load_w<WT>(a.w, c * a.ldw + k0);
      for (int r = 0; r < R; ++r) acc[r][c] = V::fma(xv[r], wv, acc[r][c]);
    }
  }
  if (k0 < a.k_end) {  // zero-padded tail: the padding adds exact zeros
    const int n = static_cast<int>(a.k_end - k0);
    typename V::T xv[R];
    for (int r = 0; r < R; ++r) xv[r] = V::load_partial(a.x + r * a.ldx + k0, n);
    for (int c = 0; c < C; ++c) {
      const typename V::T wv = V::template load_w_partial<WT>(a.w, c * a.ldw + k0, n);
      for (int r = 0; r < R; ++r) acc[r][c] = V::fma(xv[r], wv, acc[r][c]);
    }
  }
  if (!a.last) {
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) V::store(a.acc + (r * C + c) * L, acc[r][c]);
    return;
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float s = V::hsum(acc[r][c]);
      if (a.bias) s += a.bias[c * a.ldc];
      a.y[r * a.ldy + c * a.ldc] = s;
    }
}

using TileFn = void (*)(const TileArgs&);

// tile<V, rows, cols, WT> for 1 ≤ rows ≤ kRows, 1 ≤ cols ≤ kCols.
template <class V, DType WT>
struct TileTable {
  TileFn fns[V::kRows][V::kCols];
  template <int R, int C>
  constexpr void fill() {
    fns[R - 1][C - 1] = &tile<V, R, C, WT>;
    if constexpr (C > 1)
      fill<R, C - 1>();
    else if constexpr (R > 1)
      fill<R - 1, V::kCols>();
  }
  constexpr TileTable() : fns{} { fill<V::kRows, V::kCols>(); }
};

inline int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

// Rows below this run as GEMV tiles: weights streamed once in their own dtype
// while every row tile reuses them from L1. Up to 32 rows (batched decode) this
// beats converting f32 panels, whose short per-tile streams the prefetcher
// does not follow (16 rows of a 0.5B bf16 model: 180 ms a step against 230).
constexpr int64_t kGemvRows = 33;
// Target bytes of the x block [n, kc] that stays in L2 across column tiles.
constexpr int64_t kXBlockBytes = 256 * 1024;

template <class V>
int64_t k_block(int64_t n, int64_t k) {
  int64_t kc = kXBlockBytes / (4 * (n > 0 ? n : 1)) / V::kLanes * V::kLanes;
  if (kc < 16 * V::kLanes) kc = 16 * V::kLanes;
  return kc >= k ? k : kc;
}

// Converts w rows [0, cols) × [k0, k1) of dtype WT into panel [cols, k1 - k0] f32.
// The rows advance together: cols concurrent streams keep the memory system
// busy where one row after another would stall at each row's start.
template <class V, DType WT>
void convert_panel(const void* w, int64_t ldw, int cols, int64_t k0, int64_t k1, float* panel) {
  const int64_t len = k1 - k0, full = len / V::kLanes * V::kLanes;
  for (int64_t i = 0; i < full; i += V::kLanes)
    for (int c = 0; c < cols; ++c)
      V::store(panel + c * len + i, V::template load_w<WT>(w, c * ldw + k0 + i));
  for (int c = 0; c < cols; ++c)
    for (int64_t i = full; i < len; ++i)
      panel[c * len + i] = V::template scalar_w<WT>(w, c * ldw + k0 + i);
}

// Bytes ahead of each weight stream a GEMV tile prefetches, a line per stream every 64
// bytes of k (speed only): the streams' starts and the short q/o rows are where the hardware
// prefetcher lags. 512 by default (0.5B bf16 decode ~+8% on a 2-vCPU AVX-512 machine; 1024
// and 2048 no better); CAIRN_GEMV_PREFETCH (read once a process) sets it, 0 turns it off.
inline int64_t gemv_prefetch_bytes() {
  static const int64_t b = [] {
    const char* v = std::getenv("CAIRN_GEMV_PREFETCH");
    return v ? std::atoll(v) : int64_t{512};
  }();
  return b;
}

// GEMV: the range's rows are cut into kCols interleaved parts; tile t takes
// rows begin + t, begin + t + q, begin + t + 2q, ... so each of its kCols
// streams reads consecutive rows, one long sequential run the hardware
// prefetcher follows (adjacent rows would make short streams restarting every
// tile). Rows past kCols·q go in plain adjacent tiles.
template <class V, DType WT>
void gemv_cols(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* panel) {
  static constexpr TileTable<V, WT> table;
  static constexpr TileTable<V, DType::kF32> table_f32;
  const int64_t bytes = WT == DType::kF32 ? 4 : 2;
  const int64_t q = (j_end - j_begin) / V::kCols;
  // Several row tiles: widen the column tile's weights once into an f32 panel
  // [cols, k] in L1 (exact), instead of once per row tile.
  const bool widen = WT != DType::kF32 && a.n > V::kRows;
  auto run = [&](int64_t j, int cols, int64_t ldc) {
    const void* w = static_cast<const uint8_t*>(a.w) + j * a.k * bytes;
    int64_t ldw = ldc * a.k;
    const TileFn* fns = &table.fns[0][0];
    if (widen) {
      convert_panel<V, WT>(a.w, ldw, cols, j * a.k, j * a.k + a.k, panel);
      w = panel;
      ldw = a.k;
      fns = &table_f32.fns[0][0];
    }
    for (int64_t i = 0; i < a.n; i += V::kRows) {
      const int rows = static_cast<int>(min64(V::kRows, a.n - i));
      TileArgs t{a.x + i * a.k,
                 a.k,
                 w,
                 ldw,
                 0,
                 a.k,
                 true,
                 true,
                 nullptr,
                 a.y + i * a.m + j,
                 a.m,
                 a.bias ? a.bias + j : nullptr,
                 ldc,
                 widen ? 0 : gemv_prefetch_bytes()};
      fns[(rows - 1) * V::kCols + (cols - 1)](t);
    }
  };
  for (int64_t t = 0; t < q; ++t) run(j_begin + t, V::kCols, q);
  for (int64_t j = j_begin + q * V::kCols; j < j_end; j += V::kCols)
    run(j, static_cast<int>(min64(V::kCols, j_end - j)), 1);
}

// Floats of partial sums GEMM keeps for one chunk of columns (128 KiB: with
// the x block it stays in L2).
constexpr int64_t kAccFloats = 32 * 1024;

// GEMM over columns [j_begin, j_end), one chunk of columns: for each k block
// (kc, a multiple of the lane count) the x block [n, kc] stays in L2 while every
// column tile of the chunk passes over it; a tile's weights are converted once
// per block into an f32 panel that stays in L1 while every row tile uses it.
// Partial sums wait in `acc` between k blocks.
template <class V, DType WT>
void gemm_chunk(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch) {
  static constexpr TileTable<V, DType::kF32> table;
  constexpr int64_t kTileFloats = V::kRows * V::kCols * V::kLanes;
  const int64_t kc = k_block<V>(a.n, a.k), row_tiles = (a.n + V::kRows - 1) / V::kRows;
  float* panel = scratch;                // [kCols, kc]
  float* acc = scratch + V::kCols * kc;  // [column tiles][row tiles][kTileFloats]
  for (int64_t k0 = 0; k0 < a.k; k0 += kc) {
    const int64_t k1 = min64(k0 + kc, a.k);
    for (int64_t j = j_begin, jt = 0; j < j_end; j += V::kCols, ++jt) {
      const int cols = static_cast<int>(min64(V::kCols, j_end - j));
      const float* wp = panel;
      int64_t ldw = k1 - k0;
      if constexpr (WT == DType::kF32) {
        wp = static_cast<const float*>(a.w) + j * a.k + k0;
        ldw = a.k;
      } else {
        convert_panel<V, WT>(a.w, a.k, cols, j * a.k + k0, j * a.k + k1, panel);
      }
      for (int64_t i = 0; i < a.n; i += V::kRows) {
        const int rows = static_cast<int>(min64(V::kRows, a.n - i));
        float* tile_acc = acc + (jt * row_tiles + i / V::kRows) * kTileFloats;
        TileArgs t{a.x + i * a.k + k0,
                   a.k,
                   wp,
                   ldw,
                   0,
                   k1 - k0,
                   k0 == 0,
                   k1 == a.k,
                   tile_acc,
                   a.y + i * a.m + j,
                   a.m,
                   a.bias ? a.bias + j : nullptr};
        table.fns[rows - 1][cols - 1](t);
      }
    }
  }
}

template <class V, DType WT>
void gemm_cols(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch) {
  const int64_t tiles = kAccFloats / ((a.n + V::kRows) * V::kCols * V::kLanes);
  const int64_t chunk = (tiles > 1 ? tiles : 1) * V::kCols;
  for (int64_t j = j_begin; j < j_end; j += chunk)
    gemm_chunk<V, WT>(a, j, min64(j + chunk, j_end), scratch);
}

template <class V, DType WT>
void matmul_cols_for(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch) {
  if (a.n < kGemvRows || a.k == 0)
    gemv_cols<V, WT>(a, j_begin, j_end, scratch);
  else
    gemm_cols<V, WT>(a, j_begin, j_end, scratch);
}

template <class V>
void matmul_cols_any(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch) {
  switch (a.w_dtype) {
    case DType::kBF16:
      return matmul_cols_for<V, DType::kBF16>(a, j_begin, j_end, scratch);
    case DType::kF16:
      return matmul_cols_for<V, DType::kF16>(a, j_begin, j_end, scratch);
    default:
      return matmul_cols_for<V, DType::kF32>(a, j_begin, j_end, scratch);
  }
}

}  // namespace
}  // namespace cairn::ops::fast
