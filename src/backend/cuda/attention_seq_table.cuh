// The table of attention_seqs' launches: per sequence with queries, where its blocks start in
// each grid and where its partials sit in the workspace; a block finds its sequence by its block
// index, and the Params cuda::attention would build for that sequence alone.
#pragma once

#include <cstdint>

#include "backend/cuda/attention_math.cuh"
#include "backend/cuda/entry_table.cuh"

namespace cairn::cuda::attn {

// One sequence with queries, as the kernels see it.
struct SeqEntry {
  const void* k;  // [>= n_kv, n_kv_heads, head_dim]; null when paged
  const void* v;
  int64_t page_begin;  // paged: its first entry of the page table
  int64_t q_begin;     // its first row of q and out
  int64_t ws_offset;   // floats into the workspace: its part_ml, then its part_acc
  int32_t n_q, n_kv;
  int32_t split_begin, fused_begin, combine_begin;  // its first block in each grid
  int32_t vec_loads;
};

// Sequences held in the kernels' parameters (entry_table.cuh, 8 KiB): a decode step of up to 128.
constexpr int kHeldSeqs = 128;
using SeqTable = EntryTable<SeqEntry, kHeldSeqs>;

enum class Grid { kSplit, kFused, kCombine };

template <Grid G>
__device__ __forceinline__ int begin_of(const SeqEntry& e) {
  return G == Grid::kSplit ? e.split_begin : G == Grid::kFused ? e.fused_begin : e.combine_begin;
}

// The last entry whose blocks in `grid` start at or before `block` (entries are in block order
// and each has at least one block; the grid has n_blocks). A grid in which every sequence has
// as many blocks (decode) finds it at the proportional guess with two independent loads; else
// a binary search.
template <Grid G>
__device__ __forceinline__ const SeqEntry& find_seq(const SeqEntry* seqs, int n, int block,
                                                    int n_blocks) {
  const int guess = static_cast<int>(static_cast<int64_t>(block) * n / n_blocks);
  if (begin_of<G>(seqs[guess]) <= block && (guess + 1 == n || begin_of<G>(seqs[guess + 1]) > block))
    return seqs[guess];
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (begin_of<G>(seqs[mid]) <= block)
      lo = mid;
    else
      hi = mid - 1;
  }
  return seqs[lo];
}

// The Params cuda::attention would build for this sequence alone (but for the
// key positions, implicit here, and the workspace offset).
__device__ __forceinline__ Params seq_params(const Params& base, const SeqEntry& e) {
  Params p = base;
  const int64_t row0 = e.q_begin * base.n_heads * base.head_dim;
  p.q = base.q + row0, p.out = out_at(base.out, base.out_dtype, row0);
  p.q_pos = base.q_pos + e.q_begin;
  p.k = e.k, p.v = e.v, p.n_q = e.n_q, p.n_kv = e.n_kv, p.vec_loads = e.vec_loads != 0;
  if (base.pages) p.pages = base.pages + e.page_begin;
  p.n_splits = (e.n_kv + kSplitKeys - 1) / kSplitKeys;
  if (base.part_ml) {
    p.part_ml = base.part_ml + e.ws_offset;
    p.part_acc = p.part_ml + static_cast<int64_t>(e.n_q) * base.n_heads * p.n_splits * 2;
  }
  return p;
}

}  // namespace cairn::cuda::attn
