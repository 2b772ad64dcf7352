// The split block of a small grid (wide staging: batch-1 decode), its four warps sharing every
// key block instead of one warp attending while three only stage. Speed only: each value is
// computed by the operations attention_tc_math.cuh's one warp applies, in the same order.
//   scores    warp w: the n8 tile of keys 8w .. 8w + 7 (its hi and lo chains over head_dim)
//             and their masks
//   softmax   each warp's row maxima over its 8 keys meet in shared memory (a maximum is
//             exact in any order); every warp then derives the same m and r, turns its own
//             scores into weights and publishes them; each lane sums its rows' 32 weights in
//             key order from shared memory and the quad butterfly follows, as one warp would
//   values    warp w: dims [w · head_dim / 4, (w + 1) · head_dim / 4) of acc, from every
//             key's weight (hi and lo, keys 0-15 then 16-31, as tile_values)
// Two barriers a key block; the maxima and weights are double-buffered by key-block parity, so
// a buffer is rewritten only after every warp passed the barrier that follows its last read.
#pragma once

#include "backend/cuda/attention_tc_blocks.cuh"

namespace cairn::cuda::attn::tc {

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
    rows.out[h] = static_cast<int64_t>(t) * p.n_heads + kvh * p.group + row % p.group;
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

// Raw scores of key tile nt (keys 8nt .. 8nt + 7): tile_scores' chains for that tile.
template <typename T, int HD>
__device__ __forceinline__ void coop_scores(uint32_t q_hi, uint32_t q_lo, uint32_t k_tile, int nt,
                                            float (&s)[4]) {
  const int lane = threadIdx.x & 31;
  float hi[4] = {}, lo[4] = {};
#pragma unroll
  for (int ks = 0; ks < HD / 16; ++ks) {
    uint32_t ah[4], al[4], b[2];
    const uint32_t qa = chunk_at<HD>(lane % 16, 2 * ks & ~7, 2 * ks % 8 + lane / 16);
    mma::ldmatrix_x4(q_hi + qa, ah[0], ah[1], ah[2], ah[3]);
    mma::ldmatrix_x4(q_lo + qa, al[0], al[1], al[2], al[3]);
    mma::ldmatrix_x2(
        k_tile + chunk_at<HD>(nt * 8 + lane % 8, 2 * ks & ~7, 2 * ks % 8 + (lane / 8) % 2), b[0],
        b[1]);
    mma::mma_k16<T>(hi, ah, b);
    mma::mma_k16<T>(lo, al, b);
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) s[e] = __fadd_rn(hi[e], lo[e]);
}

// The softmax of the warp's key tile: the rows' block maxima met across warps, m and the
// rescale factors r updated, the warp's scores turned into weights and published.
template <int HD>
__device__ __forceinline__ void coop_weights(CoopShared& sh, int parity, float (&s)[4],
                                             CoopState<HD>& st, float (&r)[2]) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float x = fmaxf(s[2 * h], s[2 * h + 1]);
    x = fmaxf(x, __shfl_xor_sync(kFull, x, 1));
    x = fmaxf(x, __shfl_xor_sync(kFull, x, 2));
    if (lane % 4 == 0) sh.max[parity][warp][lane / 4 + 8 * h] = x;
  }
  __syncthreads();
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float* mx = &sh.max[parity][0][lane / 4 + 8 * h];
    const float bmax = fmaxf(fmaxf(mx[0], mx[kRows]), fmaxf(mx[2 * kRows], mx[3 * kRows]));
    const bool any = bmax != -INFINITY;
    const float m = fmaxf(st.m[h], bmax);
    r[h] = any ? expf(__fsub_rn(st.m[h], m)) : 1.0f;
#pragma unroll
    for (int e = 0; e < 2; ++e) s[2 * h + e] = any ? expf(__fsub_rn(s[2 * h + e], m)) : 0.0f;
    st.m[h] = m;
  }
  *reinterpret_cast<float4*>(sh.w[parity][warp][lane]) = make_float4(s[0], s[1], s[2], s[3]);
  __syncthreads();
}

// Every key's weight of this lane's rows (w[nt], the C fragment of key tile nt), then l (the
// weights summed in key order, then the quad butterfly) and the warp's acc rescaled.
template <int HD>
__device__ __forceinline__ void coop_sums(const CoopShared& sh, int parity, const float (&r)[2],
                                          float (&w)[4][4], CoopState<HD>& st) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int nt = 0; nt < 4; ++nt) {
    const float4 v = *reinterpret_cast<const float4*>(sh.w[parity][nt][lane]);
    w[nt][0] = v.x, w[nt][1] = v.y, w[nt][2] = v.z, w[nt][3] = v.w;
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float sum = 0.0f;
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < 2; ++e) sum = __fadd_rn(sum, w[nt][2 * h + e]);
    sum = __fadd_rn(sum, __shfl_xor_sync(kFull, sum, 1));
    sum = __fadd_rn(sum, __shfl_xor_sync(kFull, sum, 2));
    st.l[h] = __fmaf_rn(st.l[h], r[h], sum);
#pragma unroll
    for (int t = 0; t < HD / 32; ++t) {
      st.acc[t][2 * h] = __fmul_rn(st.acc[t][2 * h], r[h]);
      st.acc[t][2 * h + 1] = __fmul_rn(st.acc[t][2 * h + 1], r[h]);
    }
  }
}

// One key block for the block's 16 rows (this warp's share), softmax_row's and tile_values'
// operations on each value.
template <typename T, int HD>
__device__ __forceinline__ void coop_tile(const Params& p, int key0, uint32_t q_hi, uint32_t q_lo,
                                          uint32_t k_tile, uint32_t v_tile, const Rows& rows,
                                          CoopShared& sh, int parity, CoopState<HD>& st) {
  float s[4], r[2], w[4][4];
  coop_scores<T, HD>(q_hi, q_lo, k_tile, threadIdx.x >> 5, s);
  mask_tile(p, key0, threadIdx.x >> 5, rows, s);
  coop_weights<HD>(sh, parity, s, st, r);
  coop_sums<HD>(sh, parity, r, w, st);
  values_dims<T, HD, HD / 32>(w, v_tile, (threadIdx.x >> 5) * (HD / 32), st.acc);
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
template <typename T, int HD>
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
  int parity = 0;
  for (; split < split_end; ++split) {
    int blocks[kBlocksPerSplit];
    int n = 0;
    for (int kb = next_key_block(p, b, split * kBlocksPerSplit, (split + 1) * kBlocksPerSplit);
         kb < (split + 1) * kBlocksPerSplit && n < kBlocksPerSplit;
         kb = next_key_block(p, b, kb + 1, (split + 1) * kBlocksPerSplit)) {
      uint8_t* slot = stages + n * L::kStageBytes;
      stage_tile<HD, kThreads>(p, slot, slot + L::kKvTile, kvh, kb * kKeyBlock);
      blocks[n++] = kb;
    }
    mma::commit();
    if (!loaded) coop_load_q<T, HD>(p, kvh, row0, smem, smem + L::kQTile, sh);
    mma::wait_pending<0>();
    __syncthreads();  // tiles, q and scales in
    if (!loaded) rows = coop_rows(p, kvh, row0, sh.scale);
    loaded = true;
    CoopState<HD> st;
    for (int i = 0; i < n; ++i, parity ^= 1) {
      const uint32_t k_tile = mma::shared_address(stages + i * L::kStageBytes);
      coop_tile<T, HD>(p, blocks[i] * kKeyBlock, q_hi, q_lo, k_tile, k_tile + L::kKvTile, rows, sh,
                       parity, st);
    }
    coop_store<HD>(p, rows, st, split);
    __syncthreads();  // the next split restages the slots
  }
}

}  // namespace cairn::cuda::attn::tc

namespace cairn::cuda::attn::tc {

// split_block (NT = 32: one warp) or coop_split_block (NT = kThreads: a small grid's four
// warps attend together) by NT.
template <typename T, int HD, int NT>
__device__ __forceinline__ void any_split_block(const Params& p, uint8_t* smem, int kvh, int row0,
                                                int split, int split_end) {
  static_assert(NT == 32 || NT == kThreads);
  if constexpr (NT == kThreads)
    coop_split_block<T, HD>(p, smem, kvh, row0, split, split_end);
  else
    split_block<T, HD>(p, smem, kvh, row0, split, split_end);
}

}  // namespace cairn::cuda::attn::tc
