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

// A product's tail (thin_tail.cuh): the row op after a product, run by the product's own
// blocks instead of a kernel of its own.
//   kAddNorm: y = x·wᵀ (+ bias) is added into `res` (res += y, add's arithmetic) in place of
//     being stored, and the last block of each row group to finish computes out =
//     rms_norm(res)·norm as rms_norm_kernel does: the bits of add_rms_norm(res, y, norm, eps, out).
//   kGated: y [n, 2f] is stored, and the second block of each pair (gate columns c .. c + BN,
//     up columns f + c ..) to finish computes out[:, c .. c + BN] = act(gate)·up: the bits of
//     gated_activation_fused(y, act, out). Needs f a multiple of the tile's columns.
struct ThinTail {
  enum Kind : int { kNone, kAddNorm, kGated };
  int kind = kNone;
  float* res = nullptr;          // kAddNorm: n × m, the residual stream, 16-byte aligned
  const float* norm = nullptr;   // kAddNorm: m, 16-byte aligned
  float eps = 0.0f;              // kAddNorm
  int act = 0;                   // kGated: 0 SiLU, 1 GELU (tanh form)
  void* out = nullptr;           // n × m (kAddNorm) or n × m / 2 (kGated) of out_dtype, aligned
  int out_dtype = 0;             // 0 f32, 1 bf16, 2 f16
  unsigned* arrivals = nullptr;  // a count a row group (kGated: a pair of it), zeros (kept so)
};

struct ThinProblem {
  const void* x;  // n × k, w's dtype, rows contiguous, 16-byte aligned
  const void* w;  // m × k
  const float* bias;
  float* y;  // n × m
  int n, m, k;
  ThinTail tail = {};
};

// Rows of a norm a tail takes at most (m % 4 == 0, m / 4 groups of at most kTailGroups a thread
// of rms_norm's 256): longer rows run add_rms_norm after the product.
constexpr int kTailGroups = 8;
constexpr int kTailMaxDim = 256 * 4 * kTailGroups;
// Counts a tail's launch may use (row groups, or row groups × pairs).
constexpr int kTailCounts = 4096;
// The tails' counts of the current device context (zeros), or null while a graph is being
// captured before any were made.
unsigned* thin_tail_arrivals();
// The columns of w a block of thin config `config` takes for n rows (a gated tail's pairs).
int mma_thin_block_cols(int config);

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
