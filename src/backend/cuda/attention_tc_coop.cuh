// The split block of a small grid (wide staging: batch-1 decode), its four warps sharing each
// key split instead of one warp attending while three only stage. Speed only: each value is
// computed by the operations attention_tc_math.cuh's one warp applies, in the same order.
//   scores    warp w: every score of the split's key block w (tile_scores, mask_logits) and
//             its rows' maxima, published
//   softmax   warp w: the running maximum m after key block w (the maxima of blocks 0 .. w:
//             a maximum is exact in any order), block w's weights exp(logit − m) and their sums
//             in key order (then the quad butterfly), both published
//   values    each warp, for key blocks 0, 1, … in order: r, l and its quarter of acc rescaled
//             as one warp would, then acc += P·V for dims [w · head_dim / 4, (w + 1) ·
//             head_dim / 4) from the published weights (hi and, exact, lo; keys 0-15 then
//             16-31)
// So the scores and weights of a split's key blocks are found at once, and only the values'
// multiply-adds follow one key block after another; two barriers a split.
#pragma once

#include "backend/cuda/attention_tc_blocks.cuh"

namespace cairn::cuda::attn::tc {

static_assert(kBlocksPerSplit == kWarps, "warp w scores key block w of a split");

template <int HD>
struct CoopState {  // State<HD> with the warp's quarter of acc
  float m[2] = {-INFINITY, -INFINITY};
  float l[2] = {0.0f, 0.0f};
  float acc[HD / 32][4] = {};
};

// This lane's Rows for tile rows [row0, row0 + 16) of KV head kvh; scales from shared memory.
__device__ __forceinline__ Rows coop_rows(const Params& p, int kvh, int row0, const float* scale) {
  const int lane = threadIdx.x & 31, n_rows = p.n_q * p.group;
  Rows rows;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int i = lane / 4 + 8 * h, row = row0 + i, t = row / p.group;
    rows.valid[h] = row < n_rows;
    rows.pos[h] = rows.valid[h] ? p.q_pos[t] : 0;
    rows.out[h] = out_row_of(p, kvh, row);
    rows.scale[h] = scale[i];
  }
  return rows;
}

// The block's q tiles (load_q_tile's operations on each row), loaded by the four warps
// together: warp w takes tile rows 4w .. 4w + 3 and publishes their logit scales.
template <typename T, int HD>
__device__ __forceinline__ void coop_load_q(const Params& p, int kvh, int row0, uint8_t* q_hi,
                                            uint8_t* q_lo, CoopShared& sh) {
  constexpr int kPer = kRows / kWarps;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float x[kPer][HD / 32];
  q_elements<HD, kPer>(p, kvh, row0, warp * kPer, x);
  Rows rows;
#pragma unroll
  for (int r = 0; r < kPer; ++r)
    q_row<T, HD>(p, kvh, row0, warp * kPer + r, x[r], q_hi, q_lo, rows);
#pragma unroll
  for (int h = 0; h < 2; ++h) {  // q_row set scale[h] where row lane / 4 + 8h is one of the warp's
    const int i = lane / 4 + 8 * h;
    if (lane % 4 == 0 && i / kPer == warp) sh.scale[i] = rows.scale[h];
  }
}

// Phase one and two for key block w of the split (k_tile staged there, keys from key0), by
// warp w: scores and masks, the rows' maxima published; then, once every block's maxima are
// in, the running maximum after block w, the weights and their sums, published.
template <typename T, int HD, bool Exact>
__device__ __forceinline__ void coop_weights(const Params& p, int key0, uint32_t q_hi,
                                             uint32_t q_lo, uint32_t k_tile, const Rows& rows,
                                             CoopShared& sh, int w, bool attend) {
  const int lane = threadIdx.x & 31;
  float s[4][4];
  if (attend) {
    tile_scores<T, HD, Exact>(q_hi, q_lo, k_tile, s);
    mask_logits(p, key0, rows, s);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float x = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) x = fmaxf(x, fmaxf(s[nt][2 * h], s[nt][2 * h + 1]));
      x = fmaxf(x, __shfl_xor_sync(kFull, x, 1));
      x = fmaxf(x, __shfl_xor_sync(kFull, x, 2));
      if (lane % 4 == 0) sh.max[w][lane / 4 + 8 * h] = x;
    }
  }
  __syncthreads();
  if (!attend) return;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = lane / 4 + 8 * h;
    float m = -INFINITY;  // a split's state starts at −∞ (CoopState)
    for (int j = 0; j <= w; ++j) m = fmaxf(m, sh.max[j][row]);
    float sum = 0.0f;
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float& x = s[nt][2 * h + e];
        x = weight_under(x, m);
        sum = __fadd_rn(sum, x);
      }
    sum = __fadd_rn(sum, __shfl_xor_sync(kFull, sum, 1));
    sum = __fadd_rn(sum, __shfl_xor_sync(kFull, sum, 2));
    if (lane % 4 == 0) sh.sum[w][row] = sum;
  }
#pragma unroll
  for (int nt = 0; nt < 4; ++nt)
    *reinterpret_cast<float4*>(sh.w[w][nt][lane]) =
        make_float4(s[nt][0], s[nt][1], s[nt][2], s[nt][3]);
}

// Phase three for key block i (V staged at v_tile), by every warp: the online-softmax update
// of l and the warp's quarter of acc (block_softmax's operations), then its P·V.
template <typename T, int HD, bool Exact>
__device__ __forceinline__ void coop_values(const CoopShared& sh, int i, uint32_t v_tile,
                                            CoopState<HD>& st) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = lane / 4 + 8 * h;
    const float bmax = sh.max[i][row];
    const float m = fmaxf(st.m[h], bmax);
    const float r = rescale_factor(st.m[h], m);
    st.m[h] = m;
    st.l[h] = __fmaf_rn(st.l[h], r, sh.sum[i][row]);
#pragma unroll
    for (int t = 0; t < HD / 32; ++t) {
      st.acc[t][2 * h] = __fmul_rn(st.acc[t][2 * h], r);
      st.acc[t][2 * h + 1] = __fmul_rn(st.acc[t][2 * h + 1], r);
    }
  }
  float w[4][4];
#pragma unroll
  for (int nt = 0; nt < 4; ++nt) {
    const float4 v = *reinterpret_cast<const float4*>(sh.w[i][nt][lane]);
    w[nt][0] = v.x, w[nt][1] = v.y, w[nt][2] = v.z, w[nt][3] = v.w;
  }
  values_dims<T, HD, HD / 32, Exact>(w, v_tile, warp * (HD / 32), st.acc);
}

// store_partials for the warp's quarter of acc (m and l by warp 0).
template <int HD>
__device__ __forceinline__ void coop_store(const Params& p, const Rows& rows,
                                           const CoopState<HD>& st, int split) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (!rows.valid[h]) continue;
    const int64_t idx = rows.out[h] * p.n_splits + split;
    if (warp == 0 && lane % 4 == 0) p.part_ml[2 * idx] = st.m[h], p.part_ml[2 * idx + 1] = st.l[h];
    if (st.l[h] == 0.0f) continue;
    float* acc = p.part_acc + idx * HD + warp * (HD / 4) + 2 * (lane % 4);
#pragma unroll
    for (int t = 0; t < HD / 32; ++t)
      acc[8 * t] = st.acc[t][2 * h], acc[8 * t + 1] = st.acc[t][2 * h + 1];
  }
}

// Key splits [split, split_end) of 16 rows of KV head kvh (split_block's wide case): each
// split's key blocks staged at once by all threads, then attended by the four warps together.
template <typename T, int HD, bool Exact>
__device__ void coop_split_block(const Params& p, uint8_t* smem, int kvh, int row0, int split,
                                 int split_end) {
  using L = Layout<HD>;
  BlockRows b;
  b.kvh = kvh, b.row0 = row0;
  query_range(p, b, kRows);
  uint8_t* stages = smem + L::stages_offset(1);
  CoopShared& sh = *reinterpret_cast<CoopShared*>(stages + kBlocksPerSplit * L::kStageBytes);
  const uint32_t q_hi = mma::shared_address(smem), q_lo = q_hi + L::kQTile;
  Rows rows;
  bool loaded = false;
  for (; split < split_end; ++split) {
    int blocks[kBlocksPerSplit];
    int n = 0;
    for (int kb = next_key_block(p, b, split * kBlocksPerSplit, (split + 1) * kBlocksPerSplit);
         kb < (split + 1) * kBlocksPerSplit && n < kBlocksPerSplit;
         kb = next_key_block(p, b, kb + 1, (split + 1) * kBlocksPerSplit)) {
      uint8_t* slot = stages + n * L::kStageBytes;
      issue_tile<T, HD, kThreads>(p, slot, kvh, kb * kKeyBlock);
      blocks[n++] = kb;
    }
    mma::commit();
    if (!loaded) coop_load_q<T, HD>(p, kvh, row0, smem, smem + L::kQTile, sh);
    mma::wait_pending<0>();
    for (int i = 0; i < n; ++i) landed_tile<T, HD, kThreads>(p, stages + i * L::kStageBytes);
    __syncthreads();  // tiles, q and scales in
    if (!loaded) rows = coop_rows(p, kvh, row0, sh.scale);
    loaded = true;
    // Warp w scores key block w (n, the blocks staged, is the same in every warp).
    const int warp = threadIdx.x >> 5, mine = min(warp, max(n - 1, 0));
    if (n > 0) {
      const uint32_t k_tile = mma::shared_address(stages + mine * L::kStageBytes);
      coop_weights<T, HD, Exact>(p, blocks[mine] * kKeyBlock, q_hi, q_lo, k_tile, rows, sh, warp,
                                 warp < n);
      __syncthreads();  // every block's weights and sums are in
    }
    CoopState<HD> st;
    for (int i = 0; i < n; ++i)
      coop_values<T, HD, Exact>(sh, i,
                                mma::shared_address(stages + i * L::kStageBytes) + L::kKvTile, st);
    coop_store<HD>(p, rows, st, split);
    __syncthreads();  // the next split restages the slots
  }
}

}  // namespace cairn::cuda::attn::tc

namespace cairn::cuda::attn::tc {

// split_block (NT = 32: one warp) or coop_split_block (NT = kThreads: a small grid's four
// warps attend together) by NT.
template <typename T, int HD, int NT, bool Exact>
__device__ __forceinline__ void any_split_block(const Params& p, uint8_t* smem, int kvh, int row0,
                                                int split, int split_end) {
  static_assert(NT == 32 || NT == kThreads);
  if constexpr (NT == kThreads)
    coop_split_block<T, HD, Exact>(p, smem, kvh, row0, split, split_end);
  else
    split_block<T, HD, Exact>(p, smem, kvh, row0, split, split_end);
}

}  // namespace cairn::cuda::attn::tc
