// The staged combine of long rows by slices (attention_combine.cuh's combine_row_staged, cut by
// dims): a slice is 32 of a row's dims (one warp's lanes), folded by one block of a (row, slice)
// grid. Every dim's folds are its own, so a row's slices folded apart are the row's folds, the
// same bits; the row's loads and chains are spread over head_dim / 32 blocks instead of one (a
// 32k-key row's 256 partials of 128 dims: 128 KiB for one block).
//
// The folds of a slice run on one warp as a chain of one multiply-add and two selects a split:
// a split's factors come from the prefix maximum of the non-empty partials' maxima before it
// (fold_chunk's), and whether it is empty or the first non-empty one is known before the chain
// too (a non-empty partial has l ≥ 1, so "no l folded yet" is "no non-empty split before"), so
// each split's operands (its staged acc, its factors, its flags) are loaded 8 splits ahead.
#pragma once

#include "backend/cuda/attention_combine.cuh"

namespace cairn::cuda::attn {

// A slice is staged as a row of one slot (Staged<1>: 256 splits a chunk).
using Slice = Staged<1>;

// This thread's share of slice `slice` of the chunk of splits [c0, c0 + cnt): elements t,
// t + kThreads, … of the chunk's [cnt][32] accs (dims past head_dim 0) and of its (m, l) pairs.
__device__ __forceinline__ void load_slice(const Params& p, int64_t row, int slice, int c0, int cnt,
                                           float (&acc)[kStagedPer], float (&ml)[Slice::kMlPer]) {
  const int64_t first = row * p.n_splits + c0;
  const float* a = p.part_acc + first * p.head_dim + 32 * slice;
  const float* m = p.part_ml + 2 * first;
  const bool whole = 32 * (slice + 1) <= p.head_dim;
#pragma unroll
  for (int k = 0; k < kStagedPer; ++k) {
    const int e = static_cast<int>(threadIdx.x) + k * kThreads, i = e / 32, d = e % 32;
    if (i < cnt) acc[k] = whole || 32 * slice + d < p.head_dim ? a[i * p.head_dim + d] : 0.0f;
  }
#pragma unroll
  for (int k = 0; k < Slice::kMlPer; ++k) {
    const int e = static_cast<int>(threadIdx.x) + k * kThreads;
    if (e < 2 * cnt) ml[k] = m[e];
  }
}

// A slice's running fold in its warp: acc of dim `lane`, l, and the largest m of the non-empty
// partials folded so far.
struct SliceTotal {
  float acc = 0.0f, l = 0.0f, run_m = -INFINITY;
};

// Splits i0 + j, j < 32 (those below cnt), lane j holding split i0 + j's l and factors, bit j of
// `live` and `first` its flags: fold() of each in split order, without a branch.
__device__ __forceinline__ void fold_slice_round(const float* smem, int i0, int cnt, float l,
                                                 const FoldFactors& f, unsigned live,
                                                 unsigned first, SliceTotal& t) {
  const int lane = threadIdx.x & 31;
  constexpr int kAhead = 8;
#pragma unroll
  for (int j0 = 0; j0 < 32; j0 += kAhead) {
    if (i0 + j0 >= cnt) break;
    float x[kAhead], fa[kAhead], fb[kAhead], lj[kAhead];
#pragma unroll
    for (int k = 0; k < kAhead; ++k) {
      x[k] = smem[(i0 + j0 + k) * 32 + lane];  // past cnt: never live, never kept
      fa[k] = __shfl_sync(kFull, f.a, j0 + k), fb[k] = __shfl_sync(kFull, f.b, j0 + k);
      lj[k] = __shfl_sync(kFull, l, j0 + k);
    }
#pragma unroll
    for (int k = 0; k < kAhead; ++k) {
      const bool is_live = (live >> (j0 + k)) & 1u, is_first = (first >> (j0 + k)) & 1u;
      const FoldFactors fk{0.0f, fa[k], fb[k]};
      const float v = is_first ? x[k] : fold_value(t.acc, x[k], fk);
      const float lv = is_first ? lj[k] : fold_value(t.l, lj[k], fk);
      t.acc = is_live ? v : t.acc;
      t.l = is_live ? lv : t.l;
    }
  }
}

// The warp's folds of a staged chunk of cnt splits, in split order, 32 at a time: lane j finds
// split i0 + j's factors (split_factors) and flags, then fold_slice_round folds them.
__device__ __forceinline__ void fold_slice_chunk(const float* smem, int cnt, SliceTotal& t) {
  const float* ml_s = smem + kStagedFloats;
  for (int i0 = 0; i0 < cnt; i0 += 32) {
    const SplitFactors sf = split_factors(ml_s, i0, cnt, t.run_m);
    const bool live = sf.l != 0.0f;
    const unsigned live_bits = __ballot_sync(kFull, live);
    const unsigned first_bits = __ballot_sync(kFull, live && sf.before == -INFINITY);
    fold_slice_round(smem, i0, cnt, sf.l, sf.f, live_bits, first_bits, t);
  }
}

// One block of kThreads: dims [32 slice, 32 slice + 32) of output row `row` folded in split
// order through shared memory (Slice::kSmemBytes), chunk by chunk: every thread loads, the first
// warp folds.
__device__ inline void combine_slice_staged(const Params& p, int64_t row, int slice, float* smem) {
  float acc[kStagedPer], ml[Slice::kMlPer];
  SliceTotal t;
  load_slice(p, row, slice, 0, min(Slice::kChunk, p.n_splits), acc, ml);
  for (int c0 = 0; c0 < p.n_splits; c0 += Slice::kChunk) {
    const int cnt = min(Slice::kChunk, p.n_splits - c0);
    __syncthreads();  // the first warp is done folding the chunk before
    store_chunk<1>(smem, cnt, 32, acc, ml);
    __syncthreads();
    if (c0 + Slice::kChunk < p.n_splits)
      load_slice(p, row, slice, c0 + Slice::kChunk,
                 min(Slice::kChunk, p.n_splits - c0 - Slice::kChunk), acc, ml);
    if (threadIdx.x < 32) fold_slice_chunk(smem, cnt, t);
  }
  const int c = 32 * slice + static_cast<int>(threadIdx.x);
  if (threadIdx.x < 32 && c < p.head_dim)
    store_out(p, row * p.head_dim + c, final_value(t.acc, t.l));
}

}  // namespace cairn::cuda::attn
