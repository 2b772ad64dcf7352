// The wgmma tiles with several k-tiles a stage, loaded by a warp of their own (sm_90a): the
// products of 17-128 rows whose blocks each take one SM, where a block's time went more to each
// k-tile's waits than to its bytes. Every output is reduced as in wgmma_gemm's tiles (acc = 0,
// one k16 step per 16 values of k, in increasing k): the same bits, only the pipeline differs.
#pragma once

#include "backend/cuda/mma_thin.h"

namespace cairn::cuda {

// How many configs there are, and config c's name: "ws" rows of x "x" rows of w "s" stages "k"
// k-tiles of 64 a stage "w" groups left running (ws64x64s6k2w1).
int wgmma_stream_configs();
const char* wgmma_stream_name(int config);

// Launches config `config` on stream(); bf16 weights when `bf16`, else f16. Any n and m; k a
// multiple of 16. cut: where k is cut (gemm_order.h; k: not cut), then the two parts' blocks
// at once, joined at the store, or (the join off, or its counters not yet made while the stream
// captures) two launches, the first part's chain stored and the second's added: the same bits.
// Only where wgmma_gemm_available().
void wgmma_stream(const ThinProblem& p, bool bf16, int config, int cut);

// Whether a cut k runs its parts at once (default; CAIRN_GEMM_JOIN=0 or set_gemm_join(false):
// two launches, for comparisons). Process-wide.
void set_gemm_join(bool on);
bool gemm_join();
// How many joined launches this process has made (tests: that the join ran).
int64_t gemm_joined_launches();

}  // namespace cairn::cuda
