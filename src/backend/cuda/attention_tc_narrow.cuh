// The split block of decode (a narrow block): one warp over one key split of at most 8 rows of
// one KV head (a query's heads of a GQA group of up to 8), for grids in which every sequence
// has that few rows. Speed only: each row's values are those of split_block
// (attention_tc_blocks.cuh), computed by the same operations in the same order.
//   - The tile's rows 8-15 do not exist, so the scores run on the top half of the m16 tile
//     (mma_k16_top: rows 8-15 of A zeros, of C scratch) and only row g = lane / 4 of the C
//     fragments is read: half split_block's weights and softmax work. Row g's bits are the full
//     tile's (an output row reads only its own row).
//   - The values run transposed, Oᵀ += Vᵀ·Pᵀ: head dims as the tile's 16 rows, the 8 rows as its
//     n8 columns, so every accumulator register holds an output (half as many registers and
//     products as P·V on the top half). The weights' C fragments of row g are Pᵀ's B fragments
//     as they stand; each output is the same k16 steps over the same (weight, value) pairs in
//     the same order as split_block's P·V, so the same bits.
//   - The q tiles hold 8 rows (ldmatrix_x2 gives the A fragment's a[0] and a[2]).
//   - Slots: K and V of a key block through two slots (each staged while the other is read,
//     as walk_halves), or one slot, K then V (less shared memory a block, so more blocks an
//     SM; the loads of one warp wait on its compute and the other blocks' fill the gap).
#pragma once

#include "backend/cuda/attention_tc_blocks.cuh"

namespace cairn::cuda::attn::tc {

constexpr int kNarrowRows = 8;

template <int HD>
struct NarrowLayout {
  static constexpr int kQTile = kNarrowRows * HD * 2;  // hi (or lo): 8 rows of head_dim
  static constexpr int kKvTile = kKeyBlock * HD * 2;   // one K (or V) tile of a key block
  __host__ __device__ static constexpr size_t bytes(int slots) {
    return static_cast<size_t>(2 * kQTile + slots * kKvTile);
  }
};

// Row g's online-softmax state of one split (m, l), and the split's Oᵀ: acc[mt] is the C
// fragment of dims 16mt .. 16mt + 15 (the tile's rows) by the 8 rows (its columns): [0], [1]
// dim 16mt + g of rows 2(lane % 4) and 2(lane % 4) + 1; [2], [3] dim 16mt + 8 + g of the same.
template <int HD>
struct NarrowState {
  float m = -INFINITY;
  float l = 0.0f;
  float acc[HD / 16][4] = {};
};

// tile_scores for rows 0-7: s[nt] is row g's C fragment of keys 8nt .. 8nt + 7.
template <typename T, int HD, bool Exact>
__device__ __forceinline__ void narrow_scores(uint32_t q_hi, uint32_t q_lo, uint32_t k_tile,
                                              float (&s)[4][2]) {
  const int lane = threadIdx.x & 31;
  float hi[4][4] = {}, lo[4][4] = {};  // [nt][2], [3]: scratch rows g + 8
#pragma unroll 1                       // kept rolled: unrolled, ptxas gives the same registers
  for (int ks = 0; ks < HD / 16; ++ks) {
    uint32_t ah[2], al[2], b[4][2];
    const uint32_t qa = chunk_at<HD>(lane % 8, 2 * ks & ~7, 2 * ks % 8 + (lane / 8) % 2);
    mma::ldmatrix_x2(q_hi + qa, ah[0], ah[1]);
    if constexpr (Exact) mma::ldmatrix_x2(q_lo + qa, al[0], al[1]);
#pragma unroll
    for (int nt = 0; nt < 4; nt += 2) {  // tile_scores' B fragments
      const int key = nt * 8 + (lane / 16) * 8 + lane % 8;
      mma::ldmatrix_x4(k_tile + chunk_at<HD>(key, 2 * ks & ~7, 2 * ks % 8 + (lane / 8) % 2),
                       b[nt][0], b[nt][1], b[nt + 1][0], b[nt + 1][1]);
    }
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      mma::mma_k16_top<T>(hi[nt], ah, b[nt]);
      if constexpr (Exact) mma::mma_k16_top<T>(lo[nt], al, b[nt]);
    }
  }
#pragma unroll
  for (int nt = 0; nt < 4; ++nt)
#pragma unroll
    for (int e = 0; e < 2; ++e) s[nt][e] = Exact ? __fadd_rn(hi[nt][e], lo[nt][e]) : hi[nt][e];
}

// mask_logits for row g. The check-free path is taken when every valid row of the warp sees
// every key of the block: a row past the last is never stored, whatever its values.
__device__ __forceinline__ void narrow_mask(const Params& p, int key0, const Rows& rows,
                                            float (&s)[4][2]) {
  const bool all = !rows.valid[0] || (p.kv_pos == nullptr && key0 + kKeyBlock <= p.n_kv &&
                                      visible(rows.pos[0], key0 + kKeyBlock - 1, p.window) &&
                                      visible(rows.pos[0], key0, p.window));
  scale_logits(s, rows, p.softcap);
  if (__all_sync(kFull, all)) return;
#pragma unroll
  for (int nt = 0; nt < 4; ++nt) {  // mask_tile's row g (its row g + 8 is never valid here)
    float t[4] = {s[nt][0], s[nt][1], 0.0f, 0.0f};
    mask_tile(p, key0, nt, rows, t);
    s[nt][0] = t[0], s[nt][1] = t[1];
  }
}

// softmax_rows for row g alone (block_softmax of one row).
template <int HD>
__device__ __forceinline__ void narrow_softmax(float (&s)[4][2], NarrowState<HD>& st) {
  float x[1][8], m[1] = {st.m}, l[1] = {st.l}, rr[1];
#pragma unroll
  for (int nt = 0; nt < 4; ++nt) x[0][2 * nt] = s[nt][0], x[0][2 * nt + 1] = s[nt][1];
  block_softmax<1>(x, m, l, rr);
  const float r = rr[0];
  st.m = m[0], st.l = l[0];
#pragma unroll
  for (int nt = 0; nt < 4; ++nt) s[nt][0] = x[0][2 * nt], s[nt][1] = x[0][2 * nt + 1];
  if (!__any_sync(kFull, r != 1.0f)) return;
  // acc holds rows 2(lane % 4) and 2(lane % 4) + 1: their factors from a lane of each row
  const int t = (threadIdx.x & 31) % 4;
  const float r0 = __shfl_sync(kFull, r, 8 * t), r1 = __shfl_sync(kFull, r, 8 * t + 4);
#pragma unroll
  for (int mt = 0; mt < HD / 16; ++mt) {
    st.acc[mt][0] = __fmul_rn(st.acc[mt][0], r0), st.acc[mt][1] = __fmul_rn(st.acc[mt][1], r1);
    st.acc[mt][2] = __fmul_rn(st.acc[mt][2], r0), st.acc[mt][3] = __fmul_rn(st.acc[mt][3], r1);
  }
}

// tile_values, transposed: Oᵀ += Vᵀ·P_hiᵀ then (Exact) Vᵀ·P_loᵀ, keys 0-15 then 16-31, per m16
// tile of dims. hi, lo: Pᵀ's B fragments (row g's weights of keys 16ks + 2(lane % 4) + {0, 1},
// then + 8: w[2ks], w[2ks + 1]); Vᵀ's A fragment from the V tile by ldmatrix.trans (matrix j:
// keys 8(j / 2) .., dims 8(j % 2) .. of the m16 tile).
template <typename T, int HD, bool Exact>
__device__ __forceinline__ void narrow_values(const float (&w)[4][2], uint32_t v_tile,
                                              NarrowState<HD>& st) {
  const int lane = threadIdx.x & 31, mat = lane / 8;
#pragma unroll
  for (int ks = 0; ks < 2; ++ks) {
    uint32_t hi[2], lo[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      if constexpr (Exact)
        split2<T>(w[2 * ks + i][0], w[2 * ks + i][1], hi[i], lo[i]);
      else
        hi[i] = pack2<T>(w[2 * ks + i][0], w[2 * ks + i][1]);
    }
    const int key = 16 * ks + (mat / 2) * 8 + lane % 8;
#pragma unroll
    for (int mt = 0; mt < HD / 16; ++mt) {
      uint32_t a[4];
      mma::ldmatrix_x4_trans(v_tile + chunk_at<HD>(key, (2 * mt) & ~7, (2 * mt) % 8 + mat % 2),
                             a[0], a[1], a[2], a[3]);
      mma::mma_k16<T>(st.acc[mt], a, hi);
      if constexpr (Exact) mma::mma_k16<T>(st.acc[mt], a, lo);
    }
  }
}

// Key blocks [kb, end) of the split that some row may see, in order; prologue() runs once the
// first K tile's copies are issued. Slots 2: the next block's K staged while this block's
// values are summed, this block's V while its scores are computed; Slots 1: K, then V, in one.
// Quantized rows' tiles are staged one ahead too (issue_half*, then landed_half after the wait).
// At head_dim ≤ 128 each lane looks its key of a block up once, for K and V (lane_key_row), the
// next block's as this one starts, so the lookup's load is in flight while this block is
// attended; at 256 (blocks at their register bound) each tile's rows are looked up as it is
// staged (issue_half).
template <typename T, int HD, int Slots, bool Exact, typename Prologue>
__device__ void narrow_walk(const Params& p, const BlockRows& b, uint8_t* slots, uint32_t q_hi,
                            uint32_t q_lo, const Rows& rows, NarrowState<HD>& st, int kb, int end,
                            Prologue prologue) {
  using L = NarrowLayout<HD>;
  constexpr bool kAhead = HD <= 128;
  uint8_t* k_slot = slots;
  uint8_t* v_slot = slots + (Slots - 1) * L::kKvTile;
  const uint32_t k_addr = mma::shared_address(k_slot), v_addr = mma::shared_address(v_slot);
  const auto row_of = [&](int block) -> const uint8_t* {
    if constexpr (kAhead) return block < end ? lane_key_row<T, HD>(p, block * kKeyBlock) : nullptr;
    return nullptr;
  };
  const auto stage = [&](uint8_t* slot, int block, bool values, const uint8_t* mine) {
    if constexpr (kAhead)
      return issue_half_rows<T, HD>(p, slot, b.kvh, block * kKeyBlock, values, mine);
    issue_half<T, HD, 32>(p, slot, b.kvh, block * kKeyBlock, values);
  };
  const auto landed = [&](uint8_t* slot) {
    landed_half<T, HD, 32>(p, slot);
    __syncthreads();
  };
  kb = next_key_block(p, b, kb, end);
  const uint8_t* mine = row_of(kb);
  if (kb < end) stage(k_slot, kb, false, mine);
  mma::commit();
  prologue();
  while (kb < end) {
    const int next = next_key_block(p, b, kb + 1, end);
    const uint8_t* mine_next = row_of(next);
    if constexpr (Slots == 2) {
      stage(v_slot, kb, true, mine);
      mma::commit();
      mma::wait_pending<1>();  // this block's K is in
    } else {
      mma::wait_pending<0>();
    }
    landed(k_slot);
    float w[4][2];
    narrow_scores<T, HD, Exact>(q_hi, q_lo, k_addr, w);
    narrow_mask(p, kb * kKeyBlock, rows, w);
    narrow_softmax<HD>(w, st);
    __syncthreads();  // the K slot is free
    if constexpr (Slots == 2) {
      if (next < end) stage(k_slot, next, false, mine_next);
      mma::commit();
      mma::wait_pending<1>();  // this block's V is in
    } else {
      stage(v_slot, kb, true, mine);
      mma::commit();
      mma::wait_pending<0>();
    }
    landed(v_slot);
    narrow_values<T, HD, Exact>(w, v_addr, st);
    __syncthreads();  // the V slot is free
    if constexpr (Slots == 1) {
      if (next < end) stage(k_slot, next, false, mine_next);
      mma::commit();
    }
    kb = next, mine = mine_next;
  }
}

// store_partials: row g's m and l, and the acc's rows 2(lane % 4) + j (j = 0, 1), whose
// validity, output row and l come from a lane of each (every lane takes part in the shuffles).
template <int HD>
__device__ __forceinline__ void narrow_store(const Params& p, const Rows& rows,
                                             const NarrowState<HD>& st, int split) {
  const int lane = threadIdx.x & 31;
  if (rows.valid[0] && lane % 4 == 0) {
    const int64_t idx = rows.out[0] * p.n_splits + split;
    p.part_ml[2 * idx] = st.m, p.part_ml[2 * idx + 1] = st.l;
  }
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const int src = 4 * (2 * (lane % 4) + j);
    const bool valid = __shfl_sync(kFull, rows.valid[0] ? 1 : 0, src) != 0;
    const int64_t out = __shfl_sync(kFull, static_cast<long long>(rows.out[0]), src);
    const float l = __shfl_sync(kFull, st.l, src);
    if (!valid || l == 0.0f) continue;
    float* acc = p.part_acc + (out * p.n_splits + split) * HD + lane / 4;
#pragma unroll
    for (int mt = 0; mt < HD / 16; ++mt)
      acc[16 * mt] = st.acc[mt][j], acc[16 * mt + 8] = st.acc[mt][2 + j];
  }
}

// Key splits [split, split_end) of rows [row0, row0 + 8) of KV head kvh, one after another,
// the q tiles loaded once.
template <typename T, int HD, int Slots, bool Exact>
__device__ void narrow_split_block(const Params& p, uint8_t* smem, int kvh, int row0, int split,
                                   int split_end) {
  using L = NarrowLayout<HD>;
  BlockRows b;
  b.kvh = kvh, b.row0 = row0;
  query_range(p, b, kNarrowRows);
  Rows rows;
  const uint32_t q_hi = mma::shared_address(smem);
  bool loaded = false;
  auto load_q = [&] {
    if (!loaded) load_q_tile<T, HD, kNarrowRows>(p, kvh, row0, smem, smem + L::kQTile, rows);
    loaded = true;
  };
  for (; split < split_end; ++split) {
    NarrowState<HD> st;
    const int kb = split * kBlocksPerSplit;
    narrow_walk<T, HD, Slots, Exact>(p, b, smem + 2 * L::kQTile, q_hi, q_hi + L::kQTile, rows, st,
                                     kb, kb + kBlocksPerSplit, load_q);
    narrow_store<HD>(p, rows, st, split);
    __syncthreads();  // the next split restages the slots
  }
}

}  // namespace cairn::cuda::attn::tc
