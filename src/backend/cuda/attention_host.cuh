// Host-side pieces the CUDA attention's launchers share (attention.cu,
// attention_seqs.cu): which arithmetic a call's rows take, the thread blocks' rows
// and shared-memory sizes, and the split path's workspace.
#pragma once

#include <cstddef>
#include <mutex>

#include "backend/cuda/attention.h"
#include "backend/cuda/attention_blocks.cuh"
#include "backend/cuda/attention_tc_coop.cuh"
#include "backend/cuda/attention_tc_narrow.cuh"
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/rank_context.h"

namespace cairn::cuda::attn {

constexpr size_t kMaxWorkspace = size_t{256} << 20;

// Whether rows over K/V of `dtype` (quantized: affine rows, staged as f16 tiles) and `head_dim`
// take the tensor-core arithmetic: a function of the model's fixed properties and the
// process-wide switch only, never of the call's rows, keys or sequences.
inline bool tensor_core_rows(DType dtype, int head_dim, bool quantized) {
  return (quantized || dtype == DType::kBF16 || dtype == DType::kF16) &&
         (head_dim == 64 || head_dim == 128 || head_dim == 256) && attention_tensor_cores();
}

// Rows of one KV head per thread block on each path: CUDA-core blocks of 4 warps (1 row each
// on the split path, 4 on the fused), tensor-core blocks of one warp (split) or
// tc::fused_warps (fused) of 16 rows each.
struct BlockShape {
  int split_rows, fused_rows;
};

namespace tc {
// Warps of a fused block for `rows` rows of each of n_kv_heads KV heads: at head_dim 128, twelve
// (224 KiB: one block of 12 warps an SM, where 96 KiB four-warp blocks fit two, 8 warps) when
// their grid has at least eight such blocks an SM; else four. Speed only: each warp attends its
// own 16 rows the same way whatever block holds it. cuda::set_attention_fused_warps forces it.
int fused_warps(int head_dim, int64_t rows, int n_kv_heads);
}  // namespace tc

// fused_warps: the tensor-core fused blocks' (tc::fused_warps).
inline BlockShape block_shape(bool tensor_cores, int fused_warps) {
  if (tensor_cores) return {tc::kRows, fused_warps * tc::kRows};
  return {kWarps * kSplitRows, kWarps * kFusedRows};
}

// Speed only (the same folds either way, attention_combine.cuh): whether the split path's
// combine runs a block a row (combine_row_staged) for `rows` output rows of up to max_splits
// splits. cuda::set_attention_staged_combine forces it.
bool staged_combine(int max_splits, int64_t rows);
// Speed only: whether a staged combine takes a block for each 32 dims of a row
// (combine_slice_staged) instead of a block a row. cuda::set_attention_combine_slices sets it.
bool combine_slices();

// Speed only (combine_row either way): whether a split path (tensor-core blocks, or the f32
// and quantized rows' blocks) combines in its last blocks (combine_when_last) instead of a
// combine grid; wide: whether its grid is small (tc::wide_staging: the tensor-core path's
// four-warp blocks). cuda::set_attention_last_block_combine forces it.
bool last_block_combine(bool wide);

namespace tc {
// Speed only (every value is computed the same way either way): a split grid of
// fewer blocks than two per SM runs blocks of four warps that stage a whole key split
// at once and attend it together (attention_tc_coop.cuh) instead of one-warp blocks
// (batch-1 decode: n_splits × KV heads blocks). cuda::set_attention_wide_blocks forces it.
bool wide_staging(int64_t blocks);
// Speed only: key splits a narrow split block walks one after another (its q tiles loaded
// once), for a grid of `blocks` one-split blocks whose longest row has max_splits: 1, 2 or 4,
// by the grid's size; 1 over quantized rows. CAIRN_ATTENTION_SPLITS_PER_BLOCK (read once a
// process) forces it.
int splits_per_block(int64_t blocks, int max_splits, bool quantized);
// Slots of the narrow decode blocks (attention_tc_narrow.cuh): 2, 1 over quantized rows, 0
// when they are off (cuda::set_attention_narrow_blocks forces one of these).
int narrow_block_slots(bool quantized);
// Whether fused grids of this head_dim run on warpgroup products (attention_tc_wg.cuh): 64 and
// 128, on sm_90a, unless cuda::set_attention_warpgroup_products turned them off.
bool warpgroup_fused(int head_dim);
}  // namespace tc

inline size_t smem_bytes(int rows_per_warp, int stride) {
  return static_cast<size_t>(kWarps * rows_per_warp + 2 * kKeyBlock) * stride * sizeof(float);
}

// Row stride in shared memory: head_dim rounded up to 4, then to an odd number
// of 16-byte groups so that lanes 0-7 reading float4s of rows 0-7 hit 32 banks.
inline int smem_stride(int head_dim) {
  const int hd4 = (head_dim + 3) & ~3;
  return (hd4 / 4) % 2 == 0 ? hd4 + 4 : hd4;
}

// The split path's partials: one buffer, grown on the stream, reused by every
// call (calls are ordered on the one stream; the mutex orders the host side). And the
// last-block combine's counts (combine_when_last): zeros between calls, since the last block
// of each pair sets its count back.
struct Workspace {
  std::mutex mutex;
  void* data = nullptr;
  size_t bytes = 0;
  unsigned* counts = nullptr;
  size_t n_counts = 0;

  // n counts, zero (grown and zeroed on the stream when fewer are held).
  unsigned* arrivals(size_t n) {
    if (n > n_counts) {
      if (counts) CAIRN_CUDA_CHECK(cudaFreeAsync(counts, stream()));
      CAIRN_CUDA_CHECK(cudaMallocAsync(&counts, n * sizeof(unsigned), stream()));
      CAIRN_CUDA_CHECK(cudaMemsetAsync(counts, 0, n * sizeof(unsigned), stream()));
      n_counts = n;
    }
    return counts;
  }

  void* reserve(size_t need) {
    if (need > bytes) {
      if (data) CAIRN_CUDA_CHECK(cudaFreeAsync(data, stream()));
      CAIRN_CUDA_CHECK(cudaMallocAsync(&data, need, stream()));
      bytes = need;
    }
    return data;
  }
};

// The context's (rank_context.h: lives until exit, kernels may still use it).
inline Workspace& workspace() {
  return context_local<Workspace>();
}

}  // namespace cairn::cuda::attn
