// The fused block on warpgroup products (wgmma, sm_90a): fused_block's rows, key blocks, softmax
// and folds (attention_tc_blocks.cuh), with each key block's two products issued by the
// warpgroup as asynchronous wgmma k16 steps instead of each warp's mma.sync and ldmatrix, and
// the next key block's scores in flight while a block is softmaxed (walk_ahead). Speed only:
// every row's bits are fused_block's.
//   - A warpgroup (warps 4g .. 4g + 3) holds 64 rows, warp w's 16 rows at rows 16(w % 4) of its
//     q tiles: wgmma's m64 rows are the four warps' m16 fragments, and its accumulators are laid
//     out per warp as mma.sync's C fragments (wgmma.cuh), so the masks, the online softmax and
//     the folds run per warp exactly as there.
//   - Scores: s = Σ hi·k then Σ lo·k over k16 steps from dim 0, as m64n32k16 products (A: the
//     q tile, B: the K tile, both K-major in shared memory); each output element is the same
//     chain of k16 steps as tile_scores' mma.sync (a k16 step's product and sum are the same
//     instruction's on either path, docs/determinism.md).
//   - Values: acc += P_hi·V, then P_lo·V, keys 0-15, then 16-31, as m64nHDk16 products with the
//     weights' A fragments in registers (weight_fragments: mma.sync's A layout is wgmma's) and V
//     read N-major (transposed) from its tile.
// Tiles (q, K, V) are in tile_chunk's slab layout (rows of 128 bytes, 64 dims a slab), each
// 1,024-byte aligned: wgmma's K-major 128-byte swizzle for q and K; for V, its N-major one
// (8-key groups 1,024 bytes apart, 64-dim slabs kKeyBlock · 128 bytes apart).
#pragma once

#include "backend/cuda/attention_tc_blocks.cuh"
#include "backend/cuda/wgmma_rs.cuh"

namespace cairn::cuda::attn::tc {

template <int HD>
struct WgLayout {
  static_assert(HD == 64 || HD == 128, "an m64nHDk16 accumulator of HD / 2 registers a thread");
  static constexpr int kQTile = 64 * HD * 2;       // a warpgroup's hi (or lo) q tile
  static constexpr int kQSlab = 64 * 128;          // its 64 dims of 64 rows
  static constexpr int kKvSlab = kKeyBlock * 128;  // 64 dims of a K or V tile
  static constexpr int kAlign = 1024;              // the 128-byte swizzle's period
  // Layout<HD>::bytes(W, true)'s parts in the same sizes, plus slack to align the first.
  static constexpr size_t bytes(int warps) { return Layout<HD>::bytes(warps, true) + kAlign; }
};

// A key block's scores in flight: the hi and (Exact) lo chains' accumulators of
// wg_scores_issue, defined once its group is waited for (wg::wait), then read by take(); lo
// is neither written nor read under fast products.
struct WgScores {
  float hi[16], lo[16];
  // S = hi + lo (Exact) or hi, in this warp's C fragments s[nt][e].
  template <bool Exact>
  __device__ __forceinline__ void take(float (&s)[4][4]) {
    wg::pin(hi);
    if constexpr (Exact) wg::pin(lo);
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        s[nt][e] = Exact ? __fadd_rn(hi[4 * nt + e], lo[4 * nt + e]) : hi[4 * nt + e];
  }
};

// Issues S = Q·Kᵀ of the warpgroup's 64 rows and the key block's 32 keys as one committed
// group: the hi chain and (Exact) the lo chain over k16 steps from dim 0, from zero. q_hi, q_lo,
// k: descriptors (wg::tile_descriptor) of the q tiles and the K tile.
template <typename T, int HD, bool Exact>
__device__ __forceinline__ void wg_scores_issue(uint64_t q_hi, uint64_t q_lo, uint64_t k,
                                                WgScores& s) {
  using L = WgLayout<HD>;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    s.hi[i] = 0.0f;
    if constexpr (Exact) s.lo[i] = 0.0f;  // fast products leave the lo chain unused
  }
  wg::pin(s.hi);
  if constexpr (Exact) wg::pin(s.lo);
  wg::fence();
#pragma unroll
  for (int ks = 0; ks < HD / 16; ++ks) {
    const uint32_t step = (ks % 4) * 32;  // k16 step ks % 4 of slab ks / 4
    const uint64_t b = wg::advance(k, (ks / 4) * L::kKvSlab + step);
    const uint32_t a = (ks / 4) * L::kQSlab + step;
    wg::wgmma_k16<T, 32>(s.hi, wg::advance(q_hi, a), b);
    if constexpr (Exact) wg::wgmma_k16<T, 32>(s.lo, wg::advance(q_lo, a), b);
  }
  wg::commit();
}

// Issues acc += P·V over the key block as one committed group: for keys 0-15, then 16-31, the
// P_hi step, then (Exact) P_lo. st.acc is defined again once the group is waited for.
// v: the V tile's descriptor (wg::n_major_descriptor).
template <typename T, int HD, bool Exact>
__device__ __forceinline__ void wg_values_issue(const float (&w)[4][4], uint64_t v, State<HD>& st) {
  using L = WgLayout<HD>;
  float(&acc)[HD / 2] = reinterpret_cast<float(&)[HD / 2]>(st.acc);
  uint32_t hi[2][4], lo[2][4];
#pragma unroll
  for (int ks = 0; ks < 2; ++ks) weight_fragments<T, Exact>(w, ks, hi[ks], lo[ks]);
  wg::pin(acc);
  wg::fence();
#pragma unroll
  for (int ks = 0; ks < 2; ++ks) {
    const uint64_t b = wg::advance(v, ks * 2 * L::kAlign);
    wg::wgmma_k16_rs<T, HD>(acc, hi[ks], b);
    if constexpr (Exact) wg::wgmma_k16_rs<T, HD>(acc, lo[ks], b);
  }
  wg::commit();
}

// walk() on warpgroup products, each key block's scores issued before the block ahead of it is
// softmaxed, so that its products run under that softmax: at key block i (S_i in registers),
//   wait for K_{i+1} and V_i, barrier; stage K_{i+2} (over K_i) and V_{i+1} (over V_{i-1});
//   issue S_{i+1}; mask and softmax S_i; issue acc += P_i·V_i; wait for both groups.
// One barrier a key block: past it, every warp has read K_i and V_{i-1}. The same key blocks,
// tiles and per-row arithmetic as walk() with attend_tile's steps; only their timing differs.
// prologue() runs once the first tiles' copies are issued; split_end() after the last key
// block of each split.
template <typename T, int HD, bool Exact, int NT, typename Prologue, typename SplitEnd>
__device__ void walk_ahead(const Params& p, const BlockRows& b, uint8_t* stages, int kb, int end,
                           uint32_t q_hi, uint32_t q_lo, const Rows& rows, State<HD>& st,
                           Prologue prologue, SplitEnd split_end) {
  using L = Layout<HD>;
  using G = WgLayout<HD>;
  const bool stager = threadIdx.x < NT;
  const auto k_at = [&](int slot) { return stages + slot * L::kStageBytes; };
  const auto stage = [&](uint8_t* tile, int block, bool values) {
    if (block < end && stager)
      stage_half_of<T, HD, NT, kKeyBlock>(p, tile, b.kvh, block * kKeyBlock, values);
  };
  kb = next_key_block(p, b, kb, end);
  int next = kb < end ? next_key_block(p, b, kb + 1, end) : end;
  stage(k_at(0), kb, false), stage(k_at(0) + L::kKvTile, kb, true), stage(k_at(1), next, false);
  mma::commit();
  prologue();
  mma::wait_pending<0>();
  wg::fence_proxy_async();
  __syncthreads();
  // The tiles' descriptors, from the warp's lane 0 (uniform: kept in uniform registers).
  const uint64_t dq_hi = wg::tile_descriptor(__shfl_sync(kFull, q_hi, 0));
  const uint64_t dq_lo = wg::tile_descriptor(__shfl_sync(kFull, q_lo, 0));
  const uint32_t k0 = __shfl_sync(kFull, mma::shared_address(stages), 0);
  const auto k_desc = [&](int slot) { return wg::tile_descriptor(k0 + slot * L::kStageBytes); };
  const auto v_desc = [&](int slot) {
    return wg::n_major_descriptor(k0 + slot * L::kStageBytes + L::kKvTile, G::kKvSlab);
  };
  WgScores s;
  if (kb < end) wg_scores_issue<T, HD, Exact>(dq_hi, dq_lo, k_desc(0), s);
  wg::wait<0>();
  for (int slot = 0; kb < end; slot ^= 1) {
    float w[4][4];
    s.take<Exact>(w);
    mma::wait_pending<0>();  // K of the next block and V of this one are in
    wg::fence_proxy_async();
    __syncthreads();
    const int after = next < end ? next_key_block(p, b, next + 1, end) : end;
    stage(k_at(slot), after, false), stage(k_at(slot ^ 1) + L::kKvTile, next, true);
    mma::commit();
    if (next < end) wg_scores_issue<T, HD, Exact>(dq_hi, dq_lo, k_desc(slot ^ 1), s);
    mask_logits(p, kb * kKeyBlock, rows, w);
    softmax_rows<HD>(w, st);
    wg_values_issue<T, HD, Exact>(w, v_desc(slot), st);
    wg::wait<0>();
    wg::pin(reinterpret_cast<float(&)[HD / 2]>(st.acc));
    if (next >= end || next / kBlocksPerSplit != kb / kBlocksPerSplit) split_end();
    kb = next, next = after;
  }
}

// fused_block's arithmetic on warpgroups (W a multiple of 4): a warpgroup's hi q tile of 64 rows,
// then its lo, warpgroup after warpgroup, warp w's rows at row 16(w % 4) of its warpgroup's;
// the tiles in 64-dim slabs, 1,024-byte aligned.
template <typename T, int HD, bool Exact>
struct WgProducts {
  using G = WgLayout<HD>;
  static constexpr int kQRowSlab = 64;
  static constexpr int kLoApart = G::kQTile;
  static constexpr size_t kAlign = G::kAlign;
  __device__ static uint8_t* q_tile(uint8_t* smem, int warp) {
    return smem + warp / 4 * 2 * G::kQTile;
  }
  __device__ static uint8_t* q_rows(uint8_t* smem, int warp) {
    return q_tile(smem, warp) + warp % 4 * kRows * 128;
  }
  template <int NT, typename Prologue, typename SplitEnd>
  __device__ static void walk_keys(const Params& p, const BlockRows& b, uint8_t* stages, int end,
                                   uint32_t q_hi, const Rows& rows, State<HD>& st,
                                   Prologue prologue, SplitEnd split_end) {
    walk_ahead<T, HD, Exact, NT>(p, b, stages, 0, end, q_hi, q_hi + kLoApart, rows, st, prologue,
                                 split_end);
  }
};

}  // namespace cairn::cuda::attn::tc
