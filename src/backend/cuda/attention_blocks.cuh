// What one thread block of the CUDA attention does, whichever kernel launches it
// (attention.cu: one sequence; attention_seqs.cu: many, a sequence per block):
// attend one key split and write its partials, fold a row's partials, or walk
// every split in order. Params describe one sequence (attention_math.cuh).
#pragma once

#include "backend/cuda/attention_combine.cuh"
#include "backend/cuda/attention_tile.cuh"

namespace cairn::cuda::attn {

constexpr int kSplitRows = 1;  // rows per warp, split path
constexpr int kFusedRows = 4;  // rows per warp, fused path

// Split path: rows [row0, row0 + kWarps * kSplitRows) of KV head kvh over key
// split `split`; writes each row's partial (max, sum, acc) to the workspace.
template <typename T, int S>
__device__ __forceinline__ void split_block(const Params& p, float* smem, int kvh, int row0,
                                            int split) {
  BlockRows b;
  b.kvh = kvh;
  b.row0 = row0;
  RowInfo rows[kSplitRows];
  setup_block<kSplitRows>(p, b, smem, smem + kWarps * kSplitRows * p.stride, rows);
  RowState<S> st[kSplitRows];
  attend_split<T, kSplitRows, S>(p, b, smem, split, rows, st);
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int i = 0; i < kSplitRows; ++i) {
    if (!rows[i].valid) continue;
    const int64_t idx = rows[i].out * p.n_splits + split;
    if (lane == 0) p.part_ml[2 * idx] = st[i].m, p.part_ml[2 * idx + 1] = st[i].l;
    if (st[i].l == 0.0f) continue;  // the combine skips empty partials
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int c = lane + 32 * s;
      if (c < p.head_dim) p.part_acc[idx * p.head_dim + c] = st[i].acc[s];
    }
  }
}

// Fused path: rows [row0, row0 + kWarps * kFusedRows) of KV head kvh over every
// key split in order, each partial folded as it is done; writes the outputs.
template <typename T, int S>
__device__ __forceinline__ void fused_block(const Params& p, float* smem, int kvh, int row0) {
  BlockRows b;
  b.kvh = kvh;
  b.row0 = row0;
  RowInfo rows[kFusedRows];
  setup_block<kFusedRows>(p, b, smem, smem + kWarps * kFusedRows * p.stride, rows);
  RowState<S> total[kFusedRows];
  for (int split = 0; split < p.n_splits; ++split) {
    RowState<S> part[kFusedRows];
    attend_split<T, kFusedRows, S>(p, b, smem, split, rows, part);
#pragma unroll
    for (int i = 0; i < kFusedRows; ++i) fold(total[i], part[i]);
  }
#pragma unroll
  for (int i = 0; i < kFusedRows; ++i)
    if (rows[i].valid) finalize(total[i], p, rows[i].out);
}

}  // namespace cairn::cuda::attn
