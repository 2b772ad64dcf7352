// What one thread block of the tensor-core attention does, whichever kernel launches it
// (attention.cu: one sequence; attention_seqs.cu: many): the tensor-core counterparts of
// attention_blocks.cuh's split and fused blocks, with the same key splits, key blocks, block
// skipping and folds, and the per-key-block arithmetic of attention_tc_math.cuh.
//   split block  16 rows of one KV head over one key split, one warp (K and V tiles staged
//                apart: walk_halves; a small grid runs attention_tc_coop.cuh's four-warp block
//                instead): writes each row's partial (max, sum, acc) to the workspace in the
//                CUDA-core blocks' format, so the same combine kernel folds them.
//   fused block  four warps, 64 rows of one KV head (16 each), every key split in order; each
//                warp folds its rows' partials into totals kept in shared memory.
// Both walk the key blocks some row of the block may see in order (walk, walk_halves), the
// next tiles staged by every thread of the block while the current ones are read.
#pragma once

#include "backend/cuda/attention_tc_staging.cuh"
#include "backend/cuda/attention_tile.cuh"

namespace cairn::cuda::attn::tc {

// The position range of the block's queries (rows [b.row0, b.row0 + n_rows) that exist).
__device__ __forceinline__ void query_range(const Params& p, BlockRows& b, int n_rows) {
  const int last = min(p.n_q * p.group, b.row0 + n_rows) - 1;
  for (int t = b.row0 / p.group; t <= last / p.group; ++t) {
    const int32_t pos = p.q_pos[t];
    b.q_min = min(b.q_min, pos), b.q_max = max(b.q_max, pos);
  }
}

// Key blocks [kb, end) that some row of the block may see, in order: the next block's K/V
// staged (by the block's first NT threads) while the current one is attended. prologue() runs
// once the first block's copies are issued (the q tiles load meanwhile); attend(key0, k_tile,
// v_tile) takes each staged block (every thread of the block calls it: its barriers are around
// it); split_end() runs after the last block of each key split attended.
template <typename T, int HD, int NT, typename Prologue, typename Attend, typename SplitEnd>
__device__ void walk(const Params& p, const BlockRows& b, uint8_t* stages, int kb, int end,
                     Prologue prologue, Attend attend, SplitEnd split_end) {
  using L = Layout<HD>;
  const bool stager = threadIdx.x < NT;
  kb = next_key_block(p, b, kb, end);
  if (kb < end && stager) issue_tile<T, HD, NT>(p, stages, b.kvh, kb * kKeyBlock);
  mma::commit();
  prologue();
  for (int slot = 0; kb < end; slot ^= 1) {
    const int next = next_key_block(p, b, kb + 1, end);
    uint8_t* ahead = stages + (slot ^ 1) * L::kStageBytes;
    if (next < end && stager) issue_tile<T, HD, NT>(p, ahead, b.kvh, next * kKeyBlock);
    mma::commit();
    mma::wait_pending<1>();  // all but the group just committed: this slot's tiles are in
    if (stager) landed_tile<T, HD, NT>(p, stages + slot * L::kStageBytes);
    __syncthreads();
    const uint32_t k_tile = mma::shared_address(stages + slot * L::kStageBytes);
    attend(kb * kKeyBlock, k_tile, k_tile + L::kKvTile);
    __syncthreads();  // the slot is refilled two key blocks later
    if (next >= end || next / kBlocksPerSplit != kb / kBlocksPerSplit) split_end();
    kb = next;
  }
}

// walk() for split blocks (one warp) in half the staging memory (more blocks per SM): a key
// block's K tile, then its V tile, through two slots, each staged while the other is read (the
// next block's K while this block's values are summed). The same tiles and arithmetic as walk().
template <typename T, int HD, bool Exact, typename Prologue>
__device__ void walk_halves(const Params& p, const BlockRows& b, uint8_t* slots, uint32_t q_hi,
                            uint32_t q_lo, const Rows& rows, State<HD>& st, int kb, int end,
                            Prologue prologue) {
  constexpr int NT = 32;
  using L = Layout<HD>;
  uint8_t* k_slot = slots;
  uint8_t* v_slot = slots + L::kKvTile;
  const uint32_t k_addr = mma::shared_address(k_slot), v_addr = k_addr + L::kKvTile;
  kb = next_key_block(p, b, kb, end);
  if (kb < end) issue_half<T, HD, NT>(p, k_slot, b.kvh, kb * kKeyBlock, false);
  mma::commit();
  prologue();
  while (kb < end) {
    issue_half<T, HD, NT>(p, v_slot, b.kvh, kb * kKeyBlock, true);
    mma::commit();
    mma::wait_pending<1>();  // this block's K is in
    landed_half<T, HD, NT>(p, k_slot);
    __syncthreads();
    float w[4][4] = {};
    attend_keys<T, HD, Exact>(p, kb * kKeyBlock, q_hi, q_lo, k_addr, rows, st, w);
    __syncthreads();  // the K slot is free
    const int next = next_key_block(p, b, kb + 1, end);
    if (next < end) issue_half<T, HD, NT>(p, k_slot, b.kvh, next * kKeyBlock, false);
    mma::commit();
    mma::wait_pending<1>();  // this block's V is in
    landed_half<T, HD, NT>(p, v_slot);
    __syncthreads();
    tile_values<T, HD, Exact>(w, v_addr, st);
    __syncthreads();  // the V slot is free
    kb = next;
  }
}

// Split path: the warp's rows' partials of key split `split` (every valid row's max and sum;
// acc only when the sum is not 0, as the combine reads it only then).
template <int HD>
__device__ __forceinline__ void store_partials(const Params& p, const Rows& rows,
                                               const State<HD>& st, int split) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (!rows.valid[h]) continue;
    const int64_t idx = rows.out[h] * p.n_splits + split;
    if (lane % 4 == 0) p.part_ml[2 * idx] = st.m[h], p.part_ml[2 * idx + 1] = st.l[h];
    if (st.l[h] == 0.0f) continue;
    float* acc = p.part_acc + idx * HD + 2 * (lane % 4);
#pragma unroll
    for (int t = 0; t < HD / 8; ++t)
      acc[8 * t] = st.acc[t][2 * h], acc[8 * t + 1] = st.acc[t][2 * h + 1];
  }
}

// Key splits [split, split_end) of 16 rows of KV head kvh, one after another, by one warp,
// the q tiles loaded once (several splits a block: speed only, each split's partial is the
// same).
template <typename T, int HD, bool Exact>
__device__ __forceinline__ void split_block(const Params& p, uint8_t* smem, int kvh, int row0,
                                            int split, int split_end) {
  using L = Layout<HD>;
  BlockRows b;
  b.kvh = kvh, b.row0 = row0;
  query_range(p, b, kRows);
  Rows rows;
  const uint32_t q_hi = mma::shared_address(smem);
  bool loaded = false;
  auto load_q = [&] {
    if (!loaded) load_q_tile<T, HD>(p, kvh, row0, smem, smem + L::kQTile, rows);
    loaded = true;
  };
  for (; split < split_end; ++split) {
    State<HD> st;
    const int kb = split * kBlocksPerSplit, end = kb + kBlocksPerSplit;
    walk_halves<T, HD, Exact>(p, b, smem + L::stages_offset(1), q_hi, q_hi + L::kQTile, rows, st,
                              kb, end, load_q);
    store_partials<HD>(p, rows, st, split);
    __syncthreads();  // the next split restages the slots
  }
}

// The fused path's running totals of the warp's rows: max and sum in registers, acc in the
// warp's shared memory as one float2 a lane for each dim tile t and row h: pair (2t + h) · 32 +
// lane holds st.acc[t][2h] and st.acc[t][2h + 1]'s counterparts (a warp's 64-bit accesses of
// one pair index cover 256 contiguous bytes: no bank conflict, half the instructions of 32-bit
// words).
struct Totals {
  float m[2] = {-INFINITY, -INFINITY};
  float l[2] = {0.0f, 0.0f};
  float2* acc = nullptr;
};

// fold() (attention_math.cuh) in the fragment layout: the same operations per element.
template <int HD>
__device__ __forceinline__ void fold_totals(Totals& tot, const State<HD>& part) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (part.l[h] == 0.0f) continue;
    if (tot.l[h] == 0.0f) {
#pragma unroll
      for (int t = 0; t < HD / 8; ++t)
        tot.acc[(2 * t + h) * 32 + lane] = make_float2(part.acc[t][2 * h], part.acc[t][2 * h + 1]);
      tot.m[h] = part.m[h], tot.l[h] = part.l[h];
      continue;
    }
    const FoldFactors f = fold_factors(tot.m[h], part.m[h]);
#pragma unroll
    for (int t = 0; t < HD / 8; ++t) {
      float2& x = tot.acc[(2 * t + h) * 32 + lane];
      const float2 y = x;
      x = make_float2(fold_value(y.x, part.acc[t][2 * h], f),
                      fold_value(y.y, part.acc[t][2 * h + 1], f));
    }
    tot.l[h] = fold_value(tot.l[h], part.l[h], f), tot.m[h] = f.m;
  }
}

// finalize() in the fragment layout: acc / l, zeros for a row that saw no key.
template <int HD>
__device__ __forceinline__ void store_outputs(const Params& p, const Rows& rows,
                                              const Totals& tot) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (!rows.valid[h]) continue;
    const int64_t out = rows.out[h] * HD + 2 * (lane % 4);
    const float l = tot.l[h];
#pragma unroll
    for (int t = 0; t < HD / 8; ++t) {
      const float2 a = tot.acc[(2 * t + h) * 32 + lane];
      store_out(p, out + 8 * t, final_value(a.x, l));
      store_out(p, out + 8 * t + 1, final_value(a.y, l));
    }
  }
}

// A fused block's arithmetic: where each warp's q tiles lie and how the key blocks are walked
// and attended (walk_keys). Here each warp's own mma.sync: a warp's hi q tile, then its lo, warp
// after warp, the key blocks through walk() (attention_tc_wg.cuh has the warpgroups'
// counterpart).
template <typename T, int HD, bool Exact>
struct WarpProducts {
  static constexpr int kQRowSlab = 0;
  static constexpr int kLoApart = Layout<HD>::kQTile;  // from a hi q tile to its lo
  static constexpr size_t kAlign = 16;                 // of the block's shared memory
  // The hi q tile the warp's products read, and where the warp's rows start in it.
  __device__ static uint8_t* q_tile(uint8_t* smem, int warp) { return smem + warp * 2 * kLoApart; }
  __device__ static uint8_t* q_rows(uint8_t* smem, int warp) { return q_tile(smem, warp); }
  // Key blocks [0, end) through walk(), each attended by the warp's own products.
  template <int NT, typename Prologue, typename SplitEnd>
  __device__ static void walk_keys(const Params& p, const BlockRows& b, uint8_t* stages, int end,
                                   uint32_t q_hi, const Rows& rows, State<HD>& st,
                                   Prologue prologue, SplitEnd split_end) {
    walk<T, HD, NT>(
        p, b, stages, 0, end, prologue,
        [&](int key0, uint32_t k_tile, uint32_t v_tile) {
          attend_tile<T, HD, Exact>(p, key0, q_hi, q_hi + kLoApart, k_tile, v_tile, rows, st);
        },
        split_end);
  }
};

// W warps, 16 rows each: rows [row0, row0 + 16W) of KV head kvh over every key split, the key
// blocks staged by the first min(32W, 256) threads (a key row's chunks split evenly); the
// products those of A (WarpProducts, or attention_tc_wg.cuh's WgProducts), Exact or fast.
// Shared memory (from smem rounded up to A::kAlign): the q tiles, the two K/V stages, each
// warp's totals (Layout<HD>::bytes(W, true)).
template <typename T, int HD, int W, class A>
__device__ __forceinline__ void fused_block(const Params& p, uint8_t* smem, int kvh, int row0) {
  using L = Layout<HD>;
  constexpr int kW = W, kStagers = W * 32 > 256 ? 256 : W * 32;
  if constexpr (A::kAlign > 16)
    smem += (A::kAlign - mma::shared_address(smem) % A::kAlign) % A::kAlign;
  const int warp = threadIdx.x >> 5;
  BlockRows b;
  b.kvh = kvh, b.row0 = row0;
  query_range(p, b, kW * kRows);
  uint8_t* q_w = A::q_rows(smem, warp);
  Rows rows;
  const uint32_t q_hi = mma::shared_address(A::q_tile(smem, warp));
  Totals tot;
  tot.acc = reinterpret_cast<float2*>(smem + L::totals_offset(kW)) + warp * kRows * HD / 2;
  State<HD> st;
  A::template walk_keys<kStagers>(
      p, b, smem + L::stages_offset(kW), p.n_splits * kBlocksPerSplit, q_hi, rows, st,
      [&] {
        load_q_tile<T, HD, kRows, A::kQRowSlab>(p, kvh, row0 + warp * kRows, q_w, q_w + A::kLoApart,
                                                rows);
      },
      [&] {
        fold_totals<HD>(tot, st);
        st = State<HD>{};
      });
  store_outputs<HD>(p, rows, tot);
}

}  // namespace cairn::cuda::attn::tc
