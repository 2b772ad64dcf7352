// The tensor-core arithmetic of the CUDA attention: what one warp does to its 16 rows for one
// key block of 32 keys, for bf16 and f16 K/V of head_dim 64, 128 or 256 (docs/determinism.md,
// "CUDA backend: attention"). It replaces, for those rows, the CUDA-core arithmetic of
// attention_tile.cuh inside a key block; key splits, key blocks and the folds of the splits'
// partials are the same.
//
// A warp's rows are one m16 fragment: lane t holds rows g = t / 4 and g + 8 and, of each n8
// tile of columns, columns 2(t % 4) and 2(t % 4) + 1 (mma.sync m16n8k16's C layout). Of a row:
//   q' = q · 2^e   e from the row's largest |q| (prescale_exponent): exact, and keeps f16 in range
//   hi = T(q'), lo = T(q' − hi)                       (T the K/V dtype, nearest even)
//   s_j = (Σ hi·k_j) + (Σ lo·k_j)                     two chains of k16 steps over head_dim from 0
//   logit_j = s_j · (scale · 2^-e), softcapped        −∞ for a key the row does not see
//   block max: exact; weights p_j = E(logit_j − m); their sum: this lane's 8 in key order,
//   then the quad's xor-1 and xor-2 butterfly
//   l = l·r + Σp,  acc = acc·r                       r = E(m_old − m); a block without a
//                                                     visible key leaves the row unchanged
//   acc += P_hi·V then P_lo·V for keys 0-15, then for keys 16-31   (P_hi = T(p), P_lo = T(p −
//   P_hi))
// with E(x) = ex2.approx.ftz(x · log2 e), the product rounded (exp_sfu).
// Every product of T values is exact in f32 and each mma output (row i, column j) reads only
// row i of its A operand, so a row's bits depend on its own q, the keys and nothing else.
// Fast products (Exact = false: Params::fast, cuda::set_attention_fast_products): q' and p are
// rounded once to T and the lo chains are skipped (s_j = Σ hi·k_j, acc += P_hi·V): half the
// tensor-core steps, the precision of FlashAttention's bf16 products; the rest, and the rule
// above, unchanged. Each kernel is compiled once per precision (its own registers and schedule).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "backend/cuda/attention_math.cuh"
#include "backend/cuda/mma_tile.cuh"

namespace cairn::cuda::attn::tc {

constexpr int kRows = 16;  // rows per warp: one m16 fragment

// Two f32 rounded to T (nearest even), a in the low half: one 32-bit fragment register.
template <typename T>
__device__ __forceinline__ uint32_t pack2(float a, float b) {
  uint32_t r;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    r = *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __half2 h = __floats2half2_rn(a, b);
    r = *reinterpret_cast<const uint32_t*>(&h);
  }
  return r;
}

template <typename T>
__device__ __forceinline__ float2 unpack2(uint32_t r) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&r));
  else
    return __half22float2(*reinterpret_cast<const __half2*>(&r));
}

// A pair split into hi = T(x) and lo = T(x − hi) (x − hi is exact in f32).
template <typename T>
__device__ __forceinline__ void split2(float a, float b, uint32_t& hi, uint32_t& lo) {
  hi = pack2<T>(a, b);
  const float2 h = unpack2<T>(hi);
  lo = pack2<T>(__fsub_rn(a, h.x), __fsub_rn(b, h.y));
}

// 2^e as an f32, e in [-126, 127].
__device__ __forceinline__ float pow2(int e) {
  return __uint_as_float(static_cast<uint32_t>(e + 127) << 23);
}

// The row's prescale exponent: its largest |q| times 2^e lies in [2^14, 2^15), so T(q') stays
// finite in f16 and the lo parts of the row's large elements stay normal. Clamped so that 2^e
// and 2^-e are normal f32 (q = 0: any e, the row's scores are 0).
__device__ __forceinline__ int prescale_exponent(float max_abs) {
  const int biased = static_cast<int>((__float_as_uint(max_abs) >> 23) & 0xffu);
  const int x = (biased == 0 ? 1 : biased) - 126;  // max_abs = f · 2^x, f in [0.5, 1)
  return min(max(15 - x, -126), 126);
}

// This lane's two rows of its warp's tile: g = lane / 4 (index 0) and g + 8 (index 1).
struct Rows {
  bool valid[2] = {false, false};
  int32_t pos[2] = {0, 0};
  int64_t out[2] = {0, 0};        // output row: query · n_heads + head
  float scale[2] = {0.0f, 0.0f};  // the row's logit scale: params.scale · 2^-e
};

// One split's online-softmax state of this lane's two rows; acc[t] is the C fragment of dims
// 8t .. 8t + 7: [0], [1] row g, dims 8t + 2(lane % 4) + {0, 1}; [2], [3] the same of row g + 8.
template <int HD>
struct State {
  float m[2] = {-INFINITY, -INFINITY};
  float l[2] = {0.0f, 0.0f};
  float acc[HD / 8][4] = {};
};

// Byte offset of 16-byte chunk c of tile row r. SlabRows 0: rows of head_dim elements one after
// another (mma::swizzled); else slabs of 64 dims (128-byte rows), slab c / 8 holding the tile's
// SlabRows rows: the K-major 128-byte-swizzled layout wgmma reads (wgmma.cuh). The same chunk
// swizzle c % 8 ^ r % 8 in both; at head_dim 64 the two are one layout.
template <int HD, int SlabRows>
__device__ __forceinline__ uint32_t tile_chunk(int r, int c) {
  if constexpr (SlabRows == 0) return mma::swizzled<HD * 2>(r, c);
  return static_cast<uint32_t>((c / 8) * SlabRows * 128 + r * 128 + (((c % 8) ^ (r & 7)) * 16));
}

// Row i of the warp's tile from its loaded elements x (zeros past the last row): q' = q · 2^e
// split into the hi and lo tiles (laid out as tile_chunk<HD, SlabRows>), and this lane's Rows
// entry when the row is one of its two.
template <typename T, int HD, int SlabRows = 0>
__device__ __forceinline__ void q_row(const Params& p, int kvh, int row0, int i,
                                      const float (&x)[HD / 32], uint8_t* q_hi, uint8_t* q_lo,
                                      Rows& rows) {
  const int lane = threadIdx.x & 31, n_rows = p.n_q * p.group;
  const int row = row0 + i, t = row / p.group, head = kvh * p.group + row % p.group;
  const bool valid = row < n_rows;
  float max_abs = 0.0f;
#pragma unroll
  for (int j = 0; j < HD / 32; ++j) max_abs = fmaxf(max_abs, fabsf(x[j]));
  const int e = prescale_exponent(warp_max(max_abs));
  const float up = pow2(e);
#pragma unroll
  for (int j = 0; j < HD / 64; ++j) {
    const int c = 2 * lane + 64 * j;
    const uint32_t at = tile_chunk<HD, SlabRows>(i, c / 8) + (c % 8) * 2;
    uint32_t hi, lo;
    split2<T>(__fmul_rn(x[2 * j], up), __fmul_rn(x[2 * j + 1], up), hi, lo);
    *reinterpret_cast<uint32_t*>(q_hi + at) = hi;
    *reinterpret_cast<uint32_t*>(q_lo + at) = lo;
  }
#pragma unroll
  for (int h = 0; h < 2; ++h)
    if (i == lane / 4 + 8 * h) {
      rows.valid[h] = valid;
      rows.pos[h] = valid ? p.q_pos[t] : 0;
      rows.out[h] = static_cast<int64_t>(t) * p.n_heads + head;
      rows.scale[h] = __fmul_rn(p.scale, pow2(-e));
    }
}

// This lane's elements (2·lane + 64j and the one after) of tile rows i0 .. i0 + N − 1, rows
// [row0 + i0, …) of KV head kvh; zeros past the last row. The N rows' loads are in flight
// together.
template <int HD, int N>
__device__ __forceinline__ void q_elements(const Params& p, int kvh, int row0, int i0,
                                           float (&x)[N][HD / 32]) {
  const int lane = threadIdx.x & 31, n_rows = p.n_q * p.group;
#pragma unroll
  for (int r = 0; r < N; ++r) {
    const int row = row0 + i0 + r, t = row / p.group, head = kvh * p.group + row % p.group;
    const bool valid = row < n_rows;
    const float* q = p.q + (static_cast<int64_t>(t) * p.n_heads + head) * HD;
#pragma unroll
    for (int j = 0; j < HD / 64; ++j) {
      x[r][2 * j] = valid ? q[2 * lane + 64 * j] : 0.0f;
      x[r][2 * j + 1] = valid ? q[2 * lane + 64 * j + 1] : 0.0f;
    }
  }
}

// The warp's rows [row0, row0 + NR) of KV head kvh (NR 16, or 8 for a narrow block): q' split
// into hi and lo tiles of NR rows (row i's 16-byte chunk c at swizzled(i, c), as mma_tile.cuh
// lays out k-tiles; SlabRows: tile_chunk's), and this lane's Rows. Rows past the last are zeros
// and invalid.
template <typename T, int HD, int NR = kRows, int SlabRows = 0>
__device__ void load_q_tile(const Params& p, int kvh, int row0, uint8_t* q_hi, uint8_t* q_lo,
                            Rows& rows) {
  constexpr int kBatch = 4;  // rows whose loads are in flight together
  for (int i0 = 0; i0 < NR; i0 += kBatch) {
    float x[kBatch][HD / 32];
    q_elements<HD, kBatch>(p, kvh, row0, i0, x);
#pragma unroll
    for (int r = 0; r < kBatch; ++r)
      q_row<T, HD, SlabRows>(p, kvh, row0, i0 + r, x[r], q_hi, q_lo, rows);
  }
}

// mma::swizzled<HD * 2>(r, c) for chunk c = c8 + c_lo, c8 a multiple of 8 and c_lo < 8: the
// XOR with r % 8 only touches c_lo, so c8 adds a constant (an immediate offset, not a register
// per chunk kept across key blocks).
template <int HD>
__device__ __forceinline__ uint32_t chunk_at(int r, int c8, int c_lo) {
  return static_cast<uint32_t>(r * HD * 2 + c8 * 16 + ((c_lo ^ (r & 7)) * 16));
}

// Raw scores s[nt] (C fragments of keys 8nt .. 8nt + 7 of the tile) of the warp's rows: the hi
// chain and the lo chain, each over head_dim in k16 steps from 0, then hi + lo (Exact), or the
// hi chain alone.
template <typename T, int HD, bool Exact = true>
__device__ __forceinline__ void tile_scores(uint32_t q_hi, uint32_t q_lo, uint32_t k_tile,
                                            float (&s)[4][4]) {
  const int lane = threadIdx.x & 31;
  float hi[4][4] = {}, lo[4][4] = {};
#pragma unroll
  for (int ks = 0; ks < HD / 16; ++ks) {
    uint32_t ah[4], al[4], b[4][2];
    const uint32_t qa = chunk_at<HD>(lane % 16, 2 * ks & ~7, 2 * ks % 8 + lane / 16);
    mma::ldmatrix_x4(q_hi + qa, ah[0], ah[1], ah[2], ah[3]);
    if constexpr (Exact) mma::ldmatrix_x4(q_lo + qa, al[0], al[1], al[2], al[3]);
#pragma unroll
    for (int nt = 0; nt < 4; nt += 2) {
      const int key = nt * 8 + (lane / 16) * 8 + lane % 8;
      mma::ldmatrix_x4(k_tile + chunk_at<HD>(key, 2 * ks & ~7, 2 * ks % 8 + (lane / 8) % 2),
                       b[nt][0], b[nt][1], b[nt + 1][0], b[nt + 1][1]);
    }
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      mma::mma_k16<T>(hi[nt], ah, b[nt]);
      if constexpr (Exact) mma::mma_k16<T>(lo[nt], al, b[nt]);
    }
  }
#pragma unroll
  for (int nt = 0; nt < 4; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) s[nt][e] = Exact ? __fadd_rn(hi[nt][e], lo[nt][e]) : hi[nt][e];
}

// logit_scaled on the first NE elements of each n8 tile's C fragment (element e is row e / 2's),
// the softcap tested once for all of them: a branch between each score's operations would keep
// the scheduler from interleaving them.
template <int NE>
__device__ __forceinline__ void scale_logits(float (&s)[4][NE], const Rows& rows, float softcap) {
  if (softcap > 0.0f) {
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < NE; ++e)
        s[nt][e] = softcapped(__fmul_rn(s[nt][e], rows.scale[e / 2]), softcap);
    return;
  }
#pragma unroll
  for (int nt = 0; nt < 4; ++nt)
#pragma unroll
    for (int e = 0; e < NE; ++e) s[nt][e] = __fmul_rn(s[nt][e], rows.scale[e / 2]);
}

// Key tile nt's logits of both rows (keys key0 + 8nt + 2(lane % 4) + e), in place: −∞ where
// the row does not see the key (or the key is past n_kv, or the row past the last).
__device__ __forceinline__ void mask_tile(const Params& p, int key0, int nt, const Rows& rows,
                                          float (&s)[4]) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    const int key = key0 + 8 * nt + 2 * (lane % 4) + e;
    const bool in = key < p.n_kv;
    const int32_t k_pos = !in ? 0 : p.kv_pos ? p.kv_pos[key] : key;
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (!(in && rows.valid[h] && visible(rows.pos[h], k_pos, p.window))) s[2 * h + e] = -INFINITY;
  }
}

// Whether every key of the block [key0, key0 + 32) is visible to both of this lane's rows
// (keys at their indices; a causal prefill's blocks below the diagonal).
__device__ __forceinline__ bool block_visible(const Params& p, int key0, const Rows& rows) {
  bool all = p.kv_pos == nullptr && key0 + kKeyBlock <= p.n_kv;
#pragma unroll
  for (int h = 0; h < 2; ++h)
    all = all && rows.valid[h] && visible(rows.pos[h], key0 + kKeyBlock - 1, p.window) &&
          visible(rows.pos[h], key0, p.window);
  return all;
}

// The block's logits from its scores, in place: scaled (scale_logits), then, unless the whole
// warp sees every key (visible() is monotone in the key between the two ends), masked.
__device__ __forceinline__ void mask_logits(const Params& p, int key0, const Rows& rows,
                                            float (&s)[4][4]) {
  scale_logits(s, rows, p.softcap);
  if (__all_sync(kFull, block_visible(p, key0, rows))) return;
#pragma unroll
  for (int nt = 0; nt < 4; ++nt) mask_tile(p, key0, nt, rows, s[nt]);
}

// e^x for x ≤ 0 as 2^(x · log2 e) on the SFU: the product rounded, then ex2.approx.ftz
// (relative error ≤ 2^-22; results below 2^-126 flush to 0, which no sum of weights ≥ 1
// notices). Three instructions where expf takes nine; x · log2 e adds |x| · 2^-24 of relative
// error, which only the small weights (x far below 0) see.
__device__ __forceinline__ float exp_sfu(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(__fmul_rn(x, 1.4426950408889634f)));
  return y;
}

// The factor acc and l are rescaled by when a row's running maximum moves from m_old to m
// (m ≥ m_old): e^(m_old − m) (exp_sfu: exactly 1 when m = m_old), and 1 for a row that has
// seen no key yet (m_old = −∞; its acc and l are 0, so 0 · r and 0 · 1 are the same bits).
// Both sides are computed and one kept: no branch.
__device__ __forceinline__ float rescale_factor(float m_old, float m) {
  const float r = exp_sfu(__fsub_rn(m_old, m));
  return m_old == -INFINITY ? 1.0f : r;
}

// The weight e^(logit − m) (exp_sfu) of a logit under the row's maximum m, without a branch:
// a row whose maximum is still −∞ has only −∞ logits, whose weights are 0 under any finite m.
__device__ __forceinline__ float weight_under(float logit, float m) {
  return exp_sfu(__fsub_rn(logit, m == -INFINITY ? 0.0f : m));
}

// The online-softmax step over a key block of R rows, each from this lane's 8 logits x[h] (keys
// in the fragment's order: tile nt's two, nt = 0..3), in place: x[h] becomes the weights
// exp(logit − m) (0 where masked), m[h] the new max, l[h] = l·r + Σ weights (this lane's 8 in
// order, then the quad's xor-1 and xor-2 butterfly), r[h] the rescale factor (rescale_factor; 1
// when the block has no visible key: the row is unchanged). Each row's operations are its own;
// the rows' steps are interleaved so that one row's shuffles wait under the other's.
template <int R>
__device__ __forceinline__ void block_softmax(float (&x)[R][8], float (&m_row)[R],
                                              float (&l_row)[R], float (&r)[R]) {
  float bmax[R], sum[R];
#pragma unroll
  for (int h = 0; h < R; ++h) {
    bmax[h] = -INFINITY;
#pragma unroll
    for (int i = 0; i < 8; ++i) bmax[h] = fmaxf(bmax[h], x[h][i]);
  }
#pragma unroll
  for (int h = 0; h < R; ++h) bmax[h] = fmaxf(bmax[h], __shfl_xor_sync(kFull, bmax[h], 1));
#pragma unroll
  for (int h = 0; h < R; ++h) bmax[h] = fmaxf(bmax[h], __shfl_xor_sync(kFull, bmax[h], 2));
#pragma unroll
  for (int h = 0; h < R; ++h) {
    const float m = fmaxf(m_row[h], bmax[h]);
    r[h] = rescale_factor(m_row[h], m);
    sum[h] = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      x[h][i] = weight_under(x[h][i], m);
      sum[h] = __fadd_rn(sum[h], x[h][i]);
    }
    m_row[h] = m;
  }
#pragma unroll
  for (int h = 0; h < R; ++h) sum[h] = __fadd_rn(sum[h], __shfl_xor_sync(kFull, sum[h], 1));
#pragma unroll
  for (int h = 0; h < R; ++h) sum[h] = __fadd_rn(sum[h], __shfl_xor_sync(kFull, sum[h], 2));
#pragma unroll
  for (int h = 0; h < R; ++h) l_row[h] = __fmaf_rn(l_row[h], r[h], sum[h]);
}

// The block's online-softmax update of the lane's two rows (g: h = 0, g + 8: h = 1) from their
// logits (replaced by the weights): block_softmax, then acc rescaled by each row's r.
template <int HD>
__device__ __forceinline__ void softmax_rows(float (&s)[4][4], State<HD>& st) {
  float x[2][8], r[2];
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) x[h][2 * nt] = s[nt][2 * h], x[h][2 * nt + 1] = s[nt][2 * h + 1];
  block_softmax<2>(x, st.m, st.l, r);
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) s[nt][2 * h] = x[h][2 * nt], s[nt][2 * h + 1] = x[h][2 * nt + 1];
  // x · 1 is x: when no row of the warp's max moved, acc stays as it is (the same bits), and a
  // row whose max did not move is multiplied by 1 when the other's did.
  if (!__any_sync(kFull, r[0] != 1.0f || r[1] != 1.0f)) return;
#pragma unroll
  for (int t = 0; t < HD / 8; ++t)
#pragma unroll
    for (int j = 0; j < 4; ++j) st.acc[t][j] = __fmul_rn(st.acc[t][j], r[j / 2]);
}

// A's fragment registers of keys 16ks .. 16ks + 15 from the weights' C fragments (their
// halves): P_hi, and P_lo when Exact.
template <typename T, bool Exact>
__device__ __forceinline__ void weight_fragments(const float (&w)[4][4], int ks, uint32_t (&hi)[4],
                                                 uint32_t (&lo)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float a = w[2 * ks + i / 2][2 * (i % 2)], b = w[2 * ks + i / 2][2 * (i % 2) + 1];
    if constexpr (Exact)
      split2<T>(a, b, hi[i], lo[i]);
    else
      hi[i] = pack2<T>(a, b);
  }
}

// acc += P·V over the tile's keys for the n8 tiles of dims dt0 .. dt0 + NDT − 1 (acc[t] holds
// tile dt0 + t): for keys 0-15, then 16-31, each tile gets the P_hi step, then (Exact) the P_lo
// step.
template <typename T, int HD, int NDT, bool Exact = true>
__device__ __forceinline__ void values_dims(const float (&w)[4][4], uint32_t v_tile, int dt0,
                                            float (&acc)[NDT][4]) {
  const int lane = threadIdx.x & 31, mat = lane / 8;
#pragma unroll
  for (int ks = 0; ks < 2; ++ks) {
    uint32_t hi[4], lo[4];
    weight_fragments<T, Exact>(w, ks, hi, lo);
    const int key = 16 * ks + (mat % 2) * 8 + lane % 8;
#pragma unroll
    for (int t = 0; t < NDT; t += 2) {
      const int dt = dt0 + t;
      uint32_t b[2][2];
      mma::ldmatrix_x4_trans(v_tile + chunk_at<HD>(key, dt & ~7, dt % 8 + mat / 2), b[0][0],
                             b[0][1], b[1][0], b[1][1]);
      mma::mma_k16<T>(acc[t], hi, b[0]);
      if constexpr (Exact) mma::mma_k16<T>(acc[t], lo, b[0]);
      mma::mma_k16<T>(acc[t + 1], hi, b[1]);
      if constexpr (Exact) mma::mma_k16<T>(acc[t + 1], lo, b[1]);
    }
  }
}

// values_dims over every dim of the warp's rows.
template <typename T, int HD, bool Exact = true>
__device__ __forceinline__ void tile_values(const float (&w)[4][4], uint32_t v_tile,
                                            State<HD>& st) {
  values_dims<T, HD, HD / 8, Exact>(w, v_tile, 0, st.acc);
}

// A key block's first half (K tile staged at shared address k_tile) for the warp's rows: the
// online-softmax update, leaving the weights in w for tile_values.
template <typename T, int HD, bool Exact = true>
__device__ __forceinline__ void attend_keys(const Params& p, int key0, uint32_t q_hi, uint32_t q_lo,
                                            uint32_t k_tile, const Rows& rows, State<HD>& st,
                                            float (&w)[4][4]) {
  tile_scores<T, HD, Exact>(q_hi, q_lo, k_tile, w);
  mask_logits(p, key0, rows, w);
  softmax_rows<HD>(w, st);
}

// One key block (K and V tiles staged at shared addresses k_tile, v_tile) for the warp's rows.
template <typename T, int HD, bool Exact = true>
__device__ __forceinline__ void attend_tile(const Params& p, int key0, uint32_t q_hi, uint32_t q_lo,
                                            uint32_t k_tile, uint32_t v_tile, const Rows& rows,
                                            State<HD>& st) {
  float w[4][4];
  attend_keys<T, HD, Exact>(p, key0, q_hi, q_lo, k_tile, rows, st, w);
  tile_values<T, HD, Exact>(w, v_tile, st);
}

}  // namespace cairn::cuda::attn::tc
