// Causal attention on the GPU (GQA, sliding window, softcap), K/V in f32, bf16 or f16.
// Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's, the
// launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void attention(const Tensor& q, const Tensor& k, const Tensor& v,
               std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
               const ops::AttentionParams& p, Tensor& out);

// The tensor-core switch (default on; CAIRN_ATTENTION_TENSOR_CORES=0 in the environment turns
// it off, read once per process). On: rows over bf16 or f16 K/V of head_dim 64, 128 or 256
// take the tensor-core arithmetic (attention_tc_math.cuh) in attention, attention_seqs and
// attention_pages, and so do affine-quantized rows of those head dims (attention_seqs and
// attention_pages; staged as f16 tiles, attention_tc_quant.cuh); every other row, and every row
// when off, the CUDA-core arithmetic. The two
// give different bits (each deterministic), so set it before the first attention of a run.
void set_attention_tensor_cores(bool on);
// Key splits a one-warp tensor-core split block walks (speed only; 0: by the grid's size and
// one over quantized rows, the default unless CAIRN_ATTENTION_SPLITS_PER_BLOCK is set).
void set_attention_splits_per_block(int n);
// Split grids of four-warp blocks that attend a key split together (1), of one-warp blocks
// (-1), or by the grid's size (0, the default): speed only, for tests.
void set_attention_wide_blocks(int mode);
// Warps of the tensor-core fused blocks at head_dim 128: 4 or 12 for every such grid, or by the
// grid's size (0: 12 from four 12-warp blocks an SM): speed only. Default 0 unless
// CAIRN_ATTENTION_FUSED_WARPS is set (read once per process).
void set_attention_fused_warps(int warps);
// Decode split grids (every sequence at most 8 rows a KV head: one query of a GQA group of up
// to 8) on one-warp blocks of 8 rows (attention_tc_narrow.cuh) staging K and V through `slots`
// slots (1 or 2), or on the 16-row blocks (0), or by the rows (-1: one slot over quantized
// rows, else two): speed only. Default -1 unless CAIRN_ATTENTION_NARROW is set (read once per
// process).
void set_attention_narrow_blocks(int slots);
// The split path's combine on a block a row, staged through shared memory (1), on a warp a
// row (-1), or by the splits a row (0, the default: a block from 16): speed only. Default 0
// unless CAIRN_ATTENTION_STAGED_COMBINE is set (read once per process).
void set_attention_staged_combine(int mode);
// A staged combine (above) on a block a row (false) or on a block for each 32 dims of a row
// (true): speed only, each dim's folds its own. Default true unless
// CAIRN_ATTENTION_COMBINE_SLICES is set (read once per process).
void set_attention_combine_slices(bool on);
// Split grids (decode) combine their partials in each row block's last block to finish (1), in
// a combine grid (-1), or by the grid (0, the default: the last blocks in a small grid, fewer
// blocks than twice the SMs, such as batch-1 decode's): speed only, the
// same operations. Default 0 unless CAIRN_ATTENTION_LAST_BLOCK_COMBINE is set (read once per
// process).
void set_attention_last_block_combine(int mode);
// Fused (prefill) grids of head_dim 64 and 128 on warpgroup products (wgmma, sm_90a) instead of
// mma.sync: speed only, the same bits (attention_tc_wg.cuh). On by default where the GPU has
// them; CAIRN_ATTENTION_WGMMA=0 turns it off (read once per process).
void set_attention_warpgroup_products(bool on);
bool attention_warpgroup_products();
bool attention_tensor_cores();
// The tensor-core rows' products (attention_tc_math.cuh): exact (false, the default: q and p in
// hi and lo parts, within 1e-5 of the f32 CPU reference) or fast (true: q and p rounded once to
// the K/V dtype, half the tensor-core steps, FlashAttention's bf16 precision). Each gives the
// same bits on every path, batch and chunking, but not the other's: set it before the first
// attention of a run. CAIRN_ATTENTION_PRECISION=fast in the environment turns it on (read once
// per process); `--attention-precision fast` (DeviceBackend::set_attention_precision).
void set_attention_fast_products(bool on);
bool attention_fast_products();

}  // namespace cairn::cuda
