// The Hopper tiles of the fixed-order tensor-core GEMM (mma_gemm.h) for batched decode (17-128
// rows of x): y[n, m] = x[n, k] · w[m, k]ᵀ (+ bias) through wgmma (warpgroup products, sm_90a),
// every element reduced in mma_gemm's one order (acc = 0, then one k16 tensor-core step per 16
// values of k, in increasing k), so they give the bits of every other tile.
//
// A block takes 64 or 128 rows of w (one warpgroup each 64) and 32, 64 or 128 rows of x, so a
// batch's x is read from L2 once per 64-128 rows of w instead of once per 32 (the 64x32 tile),
// and the tensor memory accelerator loads the tiles without the threads. The products of
// narrow w stay bound by their outputs' k16 chains (docs/cuda.md).
#pragma once

#include <cstdint>

#include "backend/cuda/mma_thin.h"

namespace cairn::cuda {

// Whether this device runs the wgmma tiles (compute capability 9.0: the build's sm_90a code).
bool wgmma_gemm_available();

// Whether batched decode takes these tiles: where available, unless CAIRN_WGMMA=0 (read once;
// for comparisons: every tile gives the same bits).
bool wgmma_gemm_on();
// The family wgmma_gemm_pick takes: "ws" (the default: wgmma_stream's tiles where they won,
// else the "wt" ones), "wt" (loaded by the tensor memory accelerator; CAIRN_WGMMA=tma), or "wg"
// (by cp.async; CAIRN_WGMMA=cp).
const char* wgmma_gemm_family();

// How many configs there are (wgmma_stream's past this file's own), and config c's name ("wg"
// rows of x "x" rows of w "s" stages; wgmma_stream.h).
int wgmma_gemm_configs();
const char* wgmma_gemm_name(int config);

// The config for n rows of x and m rows of w; joined: k is cut and its parts run at once
// (wgmma_stream.h), so a tile's blocks count twice.
int wgmma_gemm_pick(int64_t n, int64_t m, bool joined = false);

// Launches config `config` on stream(); bf16 weights when `bf16`, else f16. Any n and m; k a
// multiple of 16 (mma_gemm_supports). Only where wgmma_gemm_available().
// cut: where k is cut (gemm_order.h; k: not cut).
void wgmma_gemm(const ThinProblem& p, int cut, bool bf16, int config);

}  // namespace cairn::cuda
