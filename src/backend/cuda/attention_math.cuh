// Device pieces of the CUDA attention (attention.cu): the arithmetic every
// (query, head) row goes through, whichever kernel runs it.
//
// Reduction scheme (docs/determinism.md, "CUDA backend: attention"): keys are cut
// into key blocks of 32 and key splits of kSplitKeys, both counted from key 0. In
// a key block lane j owns key j: it computes q·k over head_dim in index order
// with fused multiply-adds; the block's max is exact, its Σexp a fixed xor-shuffle
// tree; the weighted sum adds p_j v_j key by key, lane l owning dims l, l+32, ….
// Each split starts its own online softmax; the splits' partial (max, sum, acc)
// are folded left to right in split order. (bf16/f16 K/V of head_dim 64, 128 and
// 256 replace the arithmetic inside a key block by attention_tc_math.cuh's; the
// splits, blocks, folds and everything below are shared.) Every operation whose
// rounding matters is an explicit intrinsic (__fmaf_rn, __fmul_rn, …) so the
// compiler cannot fuse it differently in different kernels; the files that compile
// it are also compiled with -fmad=false.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backend/cuda/rounded_store.cuh"
#include "core/dtype.h"

namespace cairn::cuda::attn {

constexpr int kKeyBlock = 32;    // keys per key block (one per lane)
constexpr int kSplitKeys = 128;  // keys per key split
constexpr int kBlocksPerSplit = kSplitKeys / kKeyBlock;
constexpr int kWarps = 4;  // warps per thread block
constexpr int kThreads = kWarps * 32;
constexpr int kMaxHeadDim = 256;
constexpr unsigned kFull = 0xffffffffu;

// n / d for 0 <= n < 2^31 by a multiply-high, an add and a shift (the round-up method of
// division by invariant integers): s = ceil(log2 d), mul = floor(2^32 (2^s − d) / d) + 1, then
// n / d = (mulhi(n, mul) + n) >> s. Exact for every such n and 1 <= d < 2^31; it replaces the
// ~20-instruction integer division a paged key row's page would cost.
struct PageDivisor {
  uint32_t mul = 1;
  uint32_t shift = 0;
};

inline PageDivisor page_divisor(uint32_t d) {
  uint32_t s = 0;
  while ((uint64_t{1} << s) < d) ++s;
  const uint64_t mul = (uint64_t{1} << 32) * ((uint64_t{1} << s) - d) / d + 1;
  return {static_cast<uint32_t>(mul), s};
}

__device__ __forceinline__ int divide(int n, PageDivisor d) {
  return static_cast<int>((__umulhi(static_cast<uint32_t>(n), d.mul) + static_cast<uint32_t>(n)) >>
                          d.shift);
}

// Everything a kernel needs; device pointers except scalars.
struct Params {
  const float* q;  // [n_q, n_heads, head_dim]
  const void* k;   // [n_kv, n_kv_heads, head_dim], dtype of the kernel
  const void* v;
  void* out;                   // [n_q, n_heads, head_dim] of out_dtype (store_out)
  const int32_t* q_pos;        // [n_q]
  const int32_t* kv_pos;       // [n_kv]; null: key j is at position j
  const int32_t* block_range;  // [n_key_blocks, 2]: min and max key position per key
                               // block; null with kv_pos
  float* part_acc;             // [n_q * n_heads, n_splits, head_dim] (split path)
  float* part_ml;              // [n_q * n_heads, n_splits, 2]: max, sum (split path)
  int n_q, n_heads, n_kv_heads, group, head_dim, n_kv, n_splits;
  int stride;                 // shared-memory row stride in floats (head_dim padded)
  bool vec_loads;             // K/V rows may be read with 16-byte loads
  int group_size, row_bytes;  // quantized K/V rows (attention_quant.cuh) only
  // Quantized rows in the tensor-core blocks (staged as f16 tiles, attention_tc_quant.cuh): their
  // bits, 4 or 8; 0 for every other kernel.
  int quant_bits;
  // The one-warp blocks' raw rows (attention_tc_quant_warp.cuh): copied in pieces of quant_piece
  // bytes (8 where every row start and row_bytes allow, else 4), row_bytes / quant_piece a row.
  int quant_piece;
  PageDivisor piece_div;
  float scale, softcap;
  int window;
  bool fast;  // tensor-core rows: fast products (attention_tc_math.cuh), else exact
  // The outputs' dtype: f32, or bf16/f16 (a product's input written rounded, ops.h): each
  // output computed in f32 and rounded as round_input rounds it (rounded_store.cuh).
  DType out_dtype;
  // Split path of tensor-core blocks: a count per (row block, KV head), the last block to
  // arrive combines (combine_when_last); null: a combine grid folds the partials.
  unsigned* arrivals;
  // Paged K/V (ops::KvPages) when non-null, k and v then unused: key j's rows
  // start at pages[j / page_tokens] + k_off (v_off) + (j % page_tokens) * token
  // bytes. A null page (released out of a window) reads as zeros.
  const uint8_t* const* pages;
  int64_t k_off, v_off;
  int page_tokens;
  PageDivisor page_div;  // key / page_tokens without a division (page_divisor)
};

// The start of key `key`'s K row (all KV heads; token_bytes each), or null for a key in a
// released page; its V row lies v_gap(p) bytes after it (one lookup for both). The offsets are
// 32-bit products (key < 2^31, token_bytes < 2^32: one wide multiply).
__device__ __forceinline__ const uint8_t* key_k_row(const Params& p, int key,
                                                    uint32_t token_bytes) {
  const auto wide = [&](int i) {
    return static_cast<uint64_t>(static_cast<uint32_t>(i)) * token_bytes;
  };
  if (p.pages == nullptr) return static_cast<const uint8_t*>(p.k) + wide(key);
  const int page_i = divide(key, p.page_div);
  const uint8_t* page = p.pages[page_i];
  if (page == nullptr) return nullptr;
  return page + p.k_off + wide(key - page_i * p.page_tokens);
}

// From a key's K row to its V row: the same key's page (or index) holds both.
__device__ __forceinline__ int64_t v_gap(const Params& p) {
  if (p.pages != nullptr) return p.v_off - p.k_off;
  return reinterpret_cast<intptr_t>(p.v) - reinterpret_cast<intptr_t>(p.k);
}

// The online-softmax state of one row: lane l holds acc for dims l + 32 i,
// i < S (S = head_dim / 32 rounded up to 1, 2, 4 or 8).
template <int S>
struct RowState {
  float m = -INFINITY;  // running max of the logits
  float l = 0.0f;       // running Σ exp(logit − m); 0 means no key seen
  float acc[S] = {};
};

__device__ __forceinline__ bool visible(int32_t q_pos, int32_t kv_pos, int32_t window) {
  return kv_pos <= q_pos &&
         (window <= 0 || static_cast<int64_t>(kv_pos) > static_cast<int64_t>(q_pos) - window);
}

__device__ __forceinline__ float warp_max(float x) {
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(kFull, x, o));
  return x;
}

// Xor butterfly: every lane ends with the same bits (each step adds the same pair
// in both lanes, and addition commutes), a fixed function of the 32 lane values.
__device__ __forceinline__ float warp_sum(float x) {
  for (int o = 16; o > 0; o >>= 1) x = __fadd_rn(x, __shfl_xor_sync(kFull, x, o));
  return x;
}

// A scaled logit s softcapped: softcap · tanh(s / softcap).
__device__ __forceinline__ float softcapped(float s, float softcap) {
  return __fmul_rn(softcap, tanhf(__fdiv_rn(s, softcap)));
}

// dot · scale, softcapped when asked (the tensor-core path passes its row's scale).
__device__ __forceinline__ float logit_scaled(float dot, float scale, float softcap) {
  float s = __fmul_rn(dot, scale);
  if (softcap > 0.0f) s = softcapped(s, softcap);
  return s;
}

__device__ __forceinline__ float logit(float dot, const Params& p) {
  return logit_scaled(dot, p.scale, p.softcap);
}

// Folding a partial (m₂, l₂, acc₂) into a running (m₁, l₁, acc₁), both non-empty:
// m = max(m₁, m₂), and every l and acc element x becomes x₁·a + x₂·b.
struct FoldFactors {
  float m, a, b;
};

__device__ __forceinline__ FoldFactors fold_factors(float m1, float m2) {
  const float m = fmaxf(m1, m2);
  return {m, expf(__fsub_rn(m1, m)), expf(__fsub_rn(m2, m))};
}

__device__ __forceinline__ float fold_value(float x1, float x2, const FoldFactors& f) {
  return __fmaf_rn(x1, f.a, __fmul_rn(x2, f.b));
}

// Folds a split's partial into the running state (split order, left to right).
// An empty partial (l = 0) is skipped; the first non-empty one is taken as is.
template <int S>
__device__ __forceinline__ void fold(RowState<S>& t, const RowState<S>& part) {
  if (part.l == 0.0f) return;
  if (t.l == 0.0f) {
    t = part;
    return;
  }
  const FoldFactors f = fold_factors(t.m, part.m);
  t.l = fold_value(t.l, part.l, f);
#pragma unroll
  for (int i = 0; i < S; ++i) t.acc[i] = fold_value(t.acc[i], part.acc[i], f);
  t.m = f.m;
}

// A row's output element: acc / l, zero when the row saw no key (l = 0).
__device__ __forceinline__ float final_value(float acc, float l) {
  return l > 0.0f ? __fdiv_rn(acc, l) : 0.0f;
}

// The output row (query · n_heads + head) of row `row` of KV head kvh's rows, which list each
// query's group of heads in turn (row / group: the query; row % group: the head in the group).
__device__ __forceinline__ int64_t out_row_of(const Params& p, int kvh, int row) {
  return static_cast<int64_t>(row / p.group) * p.n_heads + kvh * p.group + row % p.group;
}

// Output element i (of p.out's elements) = v, rounded to p.out_dtype.
__device__ __forceinline__ void store_out(const Params& p, int64_t i, float v) {
  if (p.out_dtype == DType::kBF16)
    static_cast<__nv_bfloat16*>(p.out)[i] = rounded<__nv_bfloat16>(v);
  else if (p.out_dtype == DType::kF16)
    static_cast<__half*>(p.out)[i] = rounded<__half>(v);
  else
    static_cast<float*>(p.out)[i] = v;
}

// out's address of its element i (an output row's start, for a sequence's Params).
__host__ __device__ inline void* out_at(void* out, DType dtype, int64_t i) {
  return static_cast<uint8_t*>(out) + i * (dtype == DType::kF32 ? 4 : 2);
}

// Writes acc / l of output row `row` for this lane's dims (zeros when no key was visible).
template <int S>
__device__ __forceinline__ void finalize(const RowState<S>& st, const Params& p, int64_t row) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int i = 0; i < S; ++i) {
    const int c = lane + 32 * i;
    if (c < p.head_dim) store_out(p, row * p.head_dim + c, final_value(st.acc[i], st.l));
  }
}

// One key block's logits for a row: updates max and sum, rescales acc, and
// returns this lane's weight exp(s − m) (0 for a masked key or a skipped block).
template <int S>
__device__ __forceinline__ float softmax_step(RowState<S>& st, float s) {
  const float bmax = warp_max(s);
  if (bmax == -INFINITY) return 0.0f;  // no visible key: the block changes nothing
  const float m = fmaxf(st.m, bmax);
  const float r = expf(__fsub_rn(st.m, m));
  const float e = expf(__fsub_rn(s, m));
  st.l = __fmaf_rn(st.l, r, warp_sum(e));
#pragma unroll
  for (int i = 0; i < S; ++i) st.acc[i] = __fmul_rn(st.acc[i], r);
  st.m = m;
  return e;
}

}  // namespace cairn::cuda::attn
