// The parts every wgmma tile kernel shares (wgmma_gemm.cu, wgmma_stream.cu): a block's shape,
// the accelerator's maps, the k16 steps of one k-tile, and the store of the accumulators.
//
// A block of G warpgroups computes y[x0 : x0 + N, w0 : w0 + 64G] transposed: warpgroup g's
// wgmma A operand is 64 rows of w, its B operand the block's N rows of x, D[w row][x row], over
// k-tiles of 64 in S shared-memory stages of mma_tile.cuh's swizzled layout (wgmma's 128-byte
// swizzle): a stage is the w tile (64G rows of 128 bytes), then the x tile (N rows).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "backend/cuda/mma_thin.h"
#include "backend/cuda/wgmma.cuh"

namespace cairn::cuda::wgt {

template <int G, int N, int S>
struct Wg {
  static constexpr int kG = G, kStages = S;
  static constexpr int kBM = 64 * G;  // rows of w a block
  static constexpr int kN = N;        // rows of x a block
  static constexpr int kThreads = 128 * G;
  static constexpr int kTileK = 64, kRowBytes = 128, kChunksPerRow = 8;
  static constexpr int kABytes = kBM * kRowBytes, kStageBytes = (kBM + N) * kRowBytes;
  // + slack to align the stages to 1 KiB, then a barrier a stage
  static constexpr int kSmem = kStageBytes * S + 1024 + 8 * S;
  static_assert(kStageBytes % 1024 == 0 && N % 32 == 0 && S >= 3);
};

// The accelerator's maps of w and x (boxes of the block's rows); unused by cp.async tiles.
struct Maps {
  CUtensorMap w, x;
};

// Stores the block's tile: warpgroup t / 128 holds w rows w0 + 64(t / 128) + [0, 64). Thread
// t's register 4j + e holds w row 16(t / 32 % 4) + (t % 32) / 4 + 8(e / 2) of its warpgroup's
// 64, x row x0 + 8j + 2(t % 4) + e % 2 (wgmma.cuh). y = acc + bias, or with `add` (the second
// part of a cut k, whose first part y holds: read from L2, where another block or launch
// stored it) y = (y + acc) + bias.
template <class C>
__device__ __forceinline__ void store_tile(const ThinProblem& p, int x0, int w0,
                                           const float (&acc)[C::kN / 2], bool add = false) {
  const int t = static_cast<int>(threadIdx.x), lane = t % 32;
  const int w_row = w0 + t / 128 * 64 + t / 32 % 4 * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < C::kN / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = x0 + 8 * j + 2 * (lane % 4) + e % 2, col = w_row + 8 * (e / 2);
      if (row >= p.n || col >= p.m) continue;
      float* y = p.y + static_cast<int64_t>(row) * p.m + col;
      const float v = add ? __ldcg(y) + acc[4 * j + e] : acc[4 * j + e];
      *y = p.bias ? v + p.bias[col] : v;
    }
}

// The first `steps` k16 steps (at most 4) of the k-tile whose w rows start at descriptor a and
// x rows at b: d += a · b, in increasing k.
template <typename T, int NB>
__device__ __forceinline__ void k16_steps(uint64_t a, uint64_t b, int steps, float (&acc)[NB / 2]) {
  if (steps == 4) {
#pragma unroll
    for (int s = 0; s < 4; ++s) wg::wgmma_k16<T, NB>(acc, a + 2 * s, b + 2 * s);
  } else {  // the last k-tile of a k that is not a multiple of 64
    for (int s = 0; s < steps; ++s) wg::wgmma_k16<T, NB>(acc, a + 2 * s, b + 2 * s);
  }
}

// The warpgroup's k16 steps of the tile in `stage` (the first `steps`), as one group.
template <class C, typename T>
__device__ __forceinline__ void issue_tile(uint32_t stage, uint32_t a_off, int steps,
                                           float (&acc)[C::kN / 2]) {
  static_assert(C::kTileK == 64);
  const uint64_t a = wg::tile_descriptor(stage + a_off);
  const uint64_t b = wg::tile_descriptor(stage + C::kABytes);
  wg::pin(acc);
  wg::fence();
  k16_steps<T, C::kN>(a, b, steps, acc);
  wg::commit();
}

}  // namespace cairn::cuda::wgt
