// The CPU entries of the batched ops (attention_seqs, convert_rows): a loop
// over the backend's own single-sequence op, so each sequence's rows are
// exactly what that op gives alone. The reference and the fast table each
// instantiate them over their own attention and convert. With p.kv_quant
// enabled, a sequence's K/V rows are decoded to f32 first (cpu/kv_rows.h), so
// its output is bit for bit the f32 path's over the decoded rows.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "backend/cpu/kv_rows.h"
#include "backend/ops.h"

namespace cairn::ops::cpu {

template <auto Attend>
void attention_seqs_loop(const Tensor& q, std::span<const AttentionSeq> seqs,
                         std::span<const int32_t> q_positions, const AttentionParams& p,
                         Tensor& out) {
  int64_t max_kv = 0;
  for (const AttentionSeq& s : seqs) max_kv = std::max(max_kv, s.n_kv);
  std::vector<int32_t> kv_positions(static_cast<size_t>(max_kv));  // key j at position j
  for (size_t j = 0; j < kv_positions.size(); ++j) kv_positions[j] = static_cast<int32_t>(j);
  const KvRowQuant quant = p.kv_quant;
  AttentionParams p_rows = p;  // what Attend sees: f32, bf16 or f16 rows
  p_rows.kv_quant = {};
  for (const AttentionSeq& s : seqs) {
    if (s.n_q == 0) continue;
    Tensor o = out.slice_rows(s.q_begin, s.q_begin + s.n_q);
    const Tensor k =
        quant.enabled() ? decode_rows(*s.k, s.n_kv, q.dim(2), quant) : s.k->slice_rows(0, s.n_kv);
    const Tensor v =
        quant.enabled() ? decode_rows(*s.v, s.n_kv, q.dim(2), quant) : s.v->slice_rows(0, s.n_kv);
    Attend(q.slice_rows(s.q_begin, s.q_begin + s.n_q), k, v,
           q_positions.subspan(static_cast<size_t>(s.q_begin), static_cast<size_t>(s.n_q)),
           std::span<const int32_t>(kv_positions.data(), static_cast<size_t>(s.n_kv)), p_rows, o);
  }
}

template <auto Convert>
void convert_rows_loop(std::span<const RowCopy> copies) {
  for (const RowCopy& c : copies) {
    if (c.n_rows == 0) continue;
    Tensor d = c.dst->slice_rows(c.dst_row, c.dst_row + c.n_rows);
    Convert(c.src->slice_rows(c.src_row, c.src_row + c.n_rows), d);
  }
}

}  // namespace cairn::ops::cpu
