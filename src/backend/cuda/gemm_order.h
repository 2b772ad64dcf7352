// The order in which the fixed-order GEMM (mma_gemm.h) reduces every output element, shared
// by all its tiles and by the cuBLASLt runs that must give the same bits (gemm_agreement.h):
//
//   k is cut at `cut` (k itself: one part, the default; or k_split(k) where the process's
//   setting splits k and w is narrow: cut_of, mma_gemm.h's gemm_cut); each part is one chain of
//   m16n8k16 steps from zero in increasing k; y = (first + second) + bias, or first + bias for one
//   part.
//
// Why two chains: at one row of x a product's outputs are few chains of dependent tensor-core
// steps (on an H200 down, k = 14,336, ran at 46 ns a step, 1.5× its bytes' floor): two
// independent chains an output halve the dependent path at no cost in bytes: on an H200 batch
// 1 +7%; on an H100 0-2%, and the 64-128-row tiles 2-4% slower (docs/performance.md,
// 2026-12-06, afternoon). So it is on by default only where the memory is that fast for the
// multiprocessors (mma_gemm.h, gemm_cut). The cut is a multiple of 256, so no k-tile of any
// tile shape (64, 128 or 256 values of k) straddles it.
//
// Host and device; no CUDA headers, so the CPU tests check it.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define CAIRN_GEMM_ORDER_FN __host__ __device__ __forceinline__
#else
#define CAIRN_GEMM_ORDER_FN inline
#endif

namespace cairn::cuda {

// Values of k in the first part: k itself below 512 (one part), else half of k rounded down
// to a multiple of 256. The second part is never shorter than the first, nor 512 longer.
CAIRN_GEMM_ORDER_FN int64_t k_split(int64_t k) {
  return k < 512 ? k : k / 512 * 256;
}

// Rows of w from which a product counts as wide (an 8B model's gate|up: 28,672; its LM head):
// its many outputs keep the GPU's blocks streaming the weights without a cut.
constexpr int64_t kWideRows = 16384;

// Where w [m, k] is cut when the setting cuts from depth `from` (0: never): k_split(k) for a
// narrow product (m < kWideRows) of depth at least `from`, else k (one part). A wide product
// is never cut: its tiles stream at the bandwidth whole, and a cut would put its batched
// products on the two-accumulator kernels (a 70B model's gate|up, k = 8192).
CAIRN_GEMM_ORDER_FN int64_t cut_of(int64_t m, int64_t k, int64_t from) {
  return from > 0 && k >= from && m < kWideRows ? k_split(k) : k;
}

// The k-tiles of one tile shape (tile_k values of k each) in the order a kernel with one
// accumulator set a part walks them: the parts' tiles take turns (first part's tile 0,
// second part's tile 0, first's tile 1, …), then the longer part's rest. Each part's tiles
// come in increasing k, so each chain's order is the part's; taking turns leaves the other
// part's steps to overlap a running group.
struct TileOrder {
  int mid = 0;  // k-tiles of the first part
  int end = 0;  // all k-tiles (the last may be short)

  // cut: k (one part) or k_split(k).
  CAIRN_GEMM_ORDER_FN static TileOrder of(int64_t k, int64_t cut, int tile_k) {
    TileOrder o;
    o.mid = static_cast<int>(cut / tile_k);
    o.end = static_cast<int>((k + tile_k - 1) / tile_k);
    if (cut >= k) o.mid = o.end;  // one part (k may not be a tile multiple)
    return o;
  }
  CAIRN_GEMM_ORDER_FN int shared() const {  // positions 0 .. 2·shared() − 1 alternate
    const int second = end - mid;
    return mid < second ? mid : second;
  }
  // The k-tile at position j (0 ≤ j < end).
  CAIRN_GEMM_ORDER_FN int tile(int j) const {
    const int both = shared();
    if (j < 2 * both) return j % 2 == 0 ? j / 2 : mid + j / 2;
    // The longer part's rest: the first's tiles both.., or the second's mid + both.. (= j).
    return mid > end - mid ? j - both : mid + j - both;
  }
  // The part (0 or 1) of position j.
  CAIRN_GEMM_ORDER_FN int part(int j) const {
    const int both = shared();
    if (j < 2 * both) return j % 2;
    return mid > end - mid ? 0 : 1;
  }
};

}  // namespace cairn::cuda
