// The combine of the split path (attention_blocks.cuh, attention_tc_blocks.cuh): an output row's
// key-split partials (m, l, acc; workspace [row][split]) folded in split order, left to right
// (fold(), attention_math.cuh), then acc / l. Two ways to run it, the same operations on every
// value, hence the same bits:
//   combine_row         one warp a row, reading kCombineAhead splits at a time (few splits);
//   (combine_when_last  combine_row run by the last block of a split grid's row block and KV
//                       head to store its partials: no combine grid);
//   combine_row_staged  one block a row (many splits: long contexts). The block stages the
//                       partials chunk by chunk through shared memory, the next chunk's loads
//                       in flight while the current one is folded; each warp folds its own
//                       dims of acc (and l, the same in every warp). A fold's factors only need
//                       the running maximum of the non-empty partials before it, a prefix max
//                       (exact in any order), so each chunk's factors are found in parallel
//                       first and only the multiply-adds run in sequence.
#pragma once

#include "backend/cuda/arrival.cuh"
#include "backend/cuda/attention_math.cuh"

namespace cairn::cuda::attn {

// One warp: folds output row `row`'s partials in split order. They are read kCombineAhead
// splits at a time (every max and sum, then the accs of the non-empty ones), so that a row
// waits for memory twice a group rather than twice a split; through L2 (__ldcg), since other
// SMs' blocks wrote them (combine_when_last reads them in the grid that wrote them).
constexpr int kCombineAhead = 4;

template <int S>
__device__ __forceinline__ void combine_row(const Params& p, int64_t row) {
  const int lane = threadIdx.x & 31;
  RowState<S> total;
  for (int first = 0; first < p.n_splits; first += kCombineAhead) {
    RowState<S> part[kCombineAhead];
#pragma unroll
    for (int j = 0; j < kCombineAhead; ++j) {
      const int64_t idx = row * p.n_splits + first + j;
      part[j].l = first + j < p.n_splits ? __ldcg(p.part_ml + 2 * idx + 1) : 0.0f;
      if (first + j < p.n_splits) part[j].m = __ldcg(p.part_ml + 2 * idx);
    }
#pragma unroll
    for (int j = 0; j < kCombineAhead; ++j) {
      if (part[j].l == 0.0f) continue;
      const int64_t idx = row * p.n_splits + first + j;
#pragma unroll
      for (int s = 0; s < S; ++s) {
        const int c = lane + 32 * s;
        part[j].acc[s] = c < p.head_dim ? __ldcg(p.part_acc + idx * p.head_dim + c) : 0.0f;
      }
    }
#pragma unroll
    for (int j = 0; j < kCombineAhead; ++j)
      if (part[j].l != 0.0f) fold(total, part[j]);
  }
  finalize(total, p, row);
}

// The last-block combine of a split grid whose blocks attend rows [row0, row0 + n_rows) of KV
// head kvh (NT threads a block): once the block's partials are stored, it counts itself in at
// `count` (the pair's counter); the last of the pair's `expected` blocks to arrive folds the
// pair's rows with combine_row (the combine grid's operations: the same bits) and sets the count
// back to 0 for the next launch (arrive_last: one release by thread 0 after the block's
// barrier, not a fence in every thread).
template <int S, int NT>
__device__ __forceinline__ void combine_when_last(const Params& p, unsigned* count,
                                                  unsigned expected, int kvh, int row0,
                                                  int n_rows) {
  if (!arrive_last(count, expected)) return;
  const int rows = min(n_rows, p.n_q * p.group - row0);
  for (int r = static_cast<int>(threadIdx.x >> 5); r < rows; r += NT / 32)
    combine_row<S>(p, out_row_of(p, kvh, row0 + r));
}

// Rows with at least this many splits take combine_row_staged.
constexpr int kStagedSplits = 16;
// Floats of acc a chunk stages (32 KiB), and what a thread of the block holds of it.
constexpr int kStagedFloats = 8192;
constexpr int kStagedPer = kStagedFloats / kThreads;

template <int S>  // head_dim ≤ 32 S
struct Staged {
  static constexpr int kChunk = kStagedFloats / (32 * S);  // splits a chunk
  static constexpr int kMlPer = (2 * kChunk + kThreads - 1) / kThreads;
  // Shared memory: acc [kChunk][head_dim], then (m, l) [kChunk][2].
  static constexpr size_t kSmemBytes = (kStagedFloats + 2 * kChunk) * sizeof(float);
};

// This thread's share of the chunk of splits [c0, c0 + cnt): elements t, t + kThreads, … of
// its accs and of its (m, l) pairs, both contiguous in the workspace.
template <int S>
__device__ __forceinline__ void load_chunk(const Params& p, int64_t row, int c0, int cnt,
                                           float (&acc)[kStagedPer],
                                           float (&ml)[Staged<S>::kMlPer]) {
  const int64_t first = row * p.n_splits + c0;
  const float* a = p.part_acc + first * p.head_dim;
  const float* m = p.part_ml + 2 * first;
  const int n_acc = cnt * p.head_dim;
#pragma unroll
  for (int k = 0; k < kStagedPer; ++k) {
    const int e = static_cast<int>(threadIdx.x) + k * kThreads;
    if (e < n_acc) acc[k] = a[e];  // an empty partial's acc was never written: never folded
  }
#pragma unroll
  for (int k = 0; k < Staged<S>::kMlPer; ++k) {
    const int e = static_cast<int>(threadIdx.x) + k * kThreads;
    if (e < 2 * cnt) ml[k] = m[e];
  }
}

template <int S>
__device__ __forceinline__ void store_chunk(float* smem, int cnt, int head_dim,
                                            const float (&acc)[kStagedPer],
                                            const float (&ml)[Staged<S>::kMlPer]) {
  float* ml_s = smem + kStagedFloats;
#pragma unroll
  for (int k = 0; k < kStagedPer; ++k) {
    const int e = static_cast<int>(threadIdx.x) + k * kThreads;
    if (e < cnt * head_dim) smem[e] = acc[k];
  }
#pragma unroll
  for (int k = 0; k < Staged<S>::kMlPer; ++k) {
    const int e = static_cast<int>(threadIdx.x) + k * kThreads;
    if (e < 2 * cnt) ml_s[e] = ml[k];
  }
}

// The running state of a staged fold, in the warp: l, and acc of dims lane + 32s for the warp's
// slots s (s % kWarps == warp); run_m the largest m of the non-empty partials folded so far.
template <int S>
struct StagedTotal {
  float l = 0.0f, run_m = -INFINITY;
  float acc[S] = {};
};

// The warp's folds of splits i0 .. i0 + 31 of a staged chunk of cnt (Full: all 32 exist), in
// split order, with split i0 + j's l and factors held by lane j. Without a branch: every
// split's fold is computed and an empty one's result dropped (its acc, never written, may be
// anything), so the next splits' broadcasts and loads are issued ahead of the chain.
template <int S, bool Full>
__device__ __forceinline__ void fold_round(const float* smem, int i0, int cnt, int head_dim,
                                           float l, const FoldFactors& f, StagedTotal<S>& t) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    if (!Full && i0 + j >= cnt) break;
    const float lj = __shfl_sync(kFull, l, j);
    const FoldFactors fj{0.0f, __shfl_sync(kFull, f.a, j), __shfl_sync(kFull, f.b, j)};
    const bool live = lj != 0.0f, first = t.l == 0.0f;  // the first non-empty one as is
    const float* a = smem + (i0 + j) * head_dim;
    const float l_new = first ? lj : fold_value(t.l, lj, fj);
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int c = lane + 32 * s;
      if (s % kWarps != warp || c >= head_dim) continue;
      const float v = first ? a[c] : fold_value(t.acc[s], a[c], fj);
      t.acc[s] = live ? v : t.acc[s];
    }
    t.l = live ? l_new : t.l;
  }
}

// Split i0 + lane's place in a staged chunk of cnt splits ((m, l) pairs at ml_s): its l, the
// largest m of the non-empty partials before it (`before`; run_m before the chunk's round), and
// fold_factors of that and its own m (f.m is the running max for a non-empty split); run_m moves
// on to the largest up to split i0 + 31.
struct SplitFactors {
  float l, before;
  FoldFactors f;
};

__device__ __forceinline__ SplitFactors split_factors(const float* ml_s, int i0, int cnt,
                                                      float& run_m) {
  const int lane = threadIdx.x & 31, i = i0 + lane;
  const float m = i < cnt ? ml_s[2 * i] : -INFINITY, l = i < cnt ? ml_s[2 * i + 1] : 0.0f;
  float upto = l != 0.0f ? m : -INFINITY;  // max of the non-empty m up to split i
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const float y = __shfl_up_sync(kFull, upto, o);
    if (lane >= o) upto = fmaxf(upto, y);
  }
  upto = fmaxf(upto, run_m);
  float before = __shfl_up_sync(kFull, upto, 1);
  if (lane == 0) before = run_m;
  const FoldFactors f = fold_factors(before, m);
  run_m = __shfl_sync(kFull, upto, 31);
  return {l, before, f};
}

// The warp's folds of a staged chunk of cnt splits, in split order: for 32 splits at a time,
// lane j finds split i0 + j's factors (split_factors), then fold_round folds them.
template <int S>
__device__ __forceinline__ void fold_chunk(const float* smem, int cnt, int head_dim,
                                           StagedTotal<S>& t) {
  const float* ml_s = smem + kStagedFloats;
  for (int i0 = 0; i0 < cnt; i0 += 32) {
    const SplitFactors sf = split_factors(ml_s, i0, cnt, t.run_m);
    if (i0 + 32 <= cnt)
      fold_round<S, true>(smem, i0, cnt, head_dim, sf.l, sf.f, t);
    else
      fold_round<S, false>(smem, i0, cnt, head_dim, sf.l, sf.f, t);
  }
}

// One block of kThreads: output row `row`'s partials folded in split order through shared
// memory (Staged<S>::kSmemBytes), chunk by chunk.
template <int S>
__device__ void combine_row_staged(const Params& p, int64_t row, float* smem) {
  constexpr int kChunk = Staged<S>::kChunk;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float acc[kStagedPer], ml[Staged<S>::kMlPer];
  StagedTotal<S> t;
  load_chunk<S>(p, row, 0, min(kChunk, p.n_splits), acc, ml);
  for (int c0 = 0; c0 < p.n_splits; c0 += kChunk) {
    const int cnt = min(kChunk, p.n_splits - c0);
    __syncthreads();  // every warp is done folding the chunk before
    store_chunk<S>(smem, cnt, p.head_dim, acc, ml);
    __syncthreads();
    if (c0 + kChunk < p.n_splits)
      load_chunk<S>(p, row, c0 + kChunk, min(kChunk, p.n_splits - c0 - kChunk), acc, ml);
    fold_chunk<S>(smem, cnt, p.head_dim, t);
  }
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int c = lane + 32 * s;
    if (s % kWarps == warp && c < p.head_dim)
      store_out(p, row * p.head_dim + c, final_value(t.acc[s], t.l));
  }
}

}  // namespace cairn::cuda::attn
