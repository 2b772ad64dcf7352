// The thin-tile kernels of the fixed-order tensor-core GEMM (mma_gemm.h) for few rows of x
// (decode): y[n, m] = x[n, k] · w[m, k]ᵀ (+ bias) with every element reduced in mma_gemm's one
// order (gemm_order.h: acc = 0, then one m16n8k16 step per 16 values of k, in increasing k, a
// chain a part of k where k is cut), so they give the bits of every other tile.
//
// A block stages only the rows of x that exist (1, 2, 4, 8 or 16, rounded up) beside its w
// rows, k-tile by k-tile through a multi-stage cp.async pipeline; each warp walks NT n8 tiles
// of w (NT independent k chains interleaved, one A fragment load shared by them); for a cut k
// a second set of warps walks the second part beside it. Configs differ in NT, warps a block,
// k per stage and stages: speed only.
#pragma once

#include <cstdint>

#include "backend/cuda/gemm_order.h"  // kWideRows

namespace cairn::cuda {

struct ThinProblem {
  const void* x;  // n × k, w's dtype, rows contiguous, 16-byte aligned
  const void* w;  // m × k
  const float* bias;
  float* y;  // n × m
  int n, m, k;
};

// How many thin configs there are, and config c's name ("thin:nt…w…k…s…": n8 tiles a warp,
// warps a block, k a stage, stages).
int mma_thin_configs();
const char* mma_thin_name(int config);

// The config for n rows of x and m rows of w.
int mma_thin_pick(int64_t n, int64_t m);

// Launches config `config` on stream(); bf16 weights when `bf16`, else f16. Any n (rows of x
// beyond 16 run as further groups of 16).
// cut: where k is cut (gemm_order.h; k: not cut).
void mma_thin(const ThinProblem& p, int cut, bool bf16, int config);

}  // namespace cairn::cuda
