// Attention over one sequence's K/V rows held in pages: the one per-query
// routine both KV states use (the contiguous cache is a single page), so that
// a paged read equals a contiguous read bit for bit for every page size.
//
// Reduction order, fixed by the logical key index only: keys in blocks of
// kAttendKeyBlock aligned to key 0; online softmax in f32 over the blocks
// (block max, rescale of the running sum, exp, sum in key order); dot products
// over head_dim in 16 lanes (lane = index mod 16) folded by halving. Blocks with
// no visible key are skipped, so released (out-of-window) pages are never read.
// Quantized rows are decoded one row at a time inside the loop: no
// full-precision copy of the context is made.
#pragma once

#include <cstdint>
#include <span>

#include "backend/ops.h"
#include "kv/kv_format.h"

namespace cairn {

constexpr int64_t kAttendKeyBlock = 32;

// One layer of one sequence. Key j lives in page j / page_tokens at row
// j % page_tokens: its head h row starts at
//   k_pages[j / page_tokens] + (j % page_tokens) * token_bytes + h * row_bytes.
struct PagedRows {
  std::span<const uint8_t* const>
      k_pages;  // [n_pages], each at this layer's K block (null: released)
  std::span<const uint8_t* const> v_pages;  // [n_pages], each at this layer's V block
  int64_t page_tokens = 0;
  size_t token_bytes = 0;  // n_kv_heads * row_bytes
  size_t row_bytes = 0;    // format.row_bytes(head_dim)
  LayerFormat format;
  int64_t n_kv = 0;  // keys at positions 0 .. n_kv - 1
};

// q [n_q, n_heads, head_dim] f32; q_positions [n_q]; out [n_q, n_heads, head_dim] f32.
// A query at position p sees keys at positions ≤ p (and > p - window when
// p.window > 0); one that sees none gets zeros. n_heads is a multiple of n_kv_heads.
void attend_paged(const PagedRows& kv, const float* q, std::span<const int32_t> q_positions,
                  int64_t n_heads, int64_t n_kv_heads, int64_t head_dim,
                  const ops::AttentionParams& p, float* out);

}  // namespace cairn
