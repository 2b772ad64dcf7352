#include "backend/cpu/kv_pages.h"

#include <cstring>
#include <vector>

namespace cairn::ops::cpu {
namespace {

// Rows [0, n_kv) of one sequence's K (or V) blocks, copied out of its pages;
// rows of a released page stay zero (no query sees them).
Tensor gather(const KvPages& kv, const AttentionSeq& s, size_t block_offset, int64_t row_elems) {
  Tensor t = Tensor::zeros({s.n_kv, kv.n_kv_heads, row_elems}, kv.dtype);
  const size_t token_bytes = dtype_bytes(kv.dtype, static_cast<size_t>(kv.n_kv_heads * row_elems));
  auto* dst = static_cast<uint8_t*>(t.raw());
  for (int64_t j0 = 0; j0 < s.n_kv; j0 += kv.page_tokens) {
    const void* page = kv.pages[static_cast<size_t>(s.page_begin + j0 / kv.page_tokens)];
    if (page == nullptr) continue;
    const int64_t n = std::min(kv.page_tokens, s.n_kv - j0);
    std::memcpy(dst + static_cast<size_t>(j0) * token_bytes,
                static_cast<const uint8_t*>(page) + block_offset,
                static_cast<size_t>(n) * token_bytes);
  }
  return t;
}

}  // namespace

void attention_pages(const Tensor& q, const KvPages& kv, std::span<const AttentionSeq> seqs,
                     std::span<const int32_t> q_positions, const AttentionParams& p, Tensor& out) {
  const int64_t head_dim = q.dim(2);
  const int64_t row_elems = p.kv_quant.enabled() ? p.kv_quant.row_bytes(head_dim) : head_dim;
  std::vector<Tensor> k, v;  // one pair per sequence; the AttentionSeqs point at them
  k.reserve(seqs.size()), v.reserve(seqs.size());
  std::vector<AttentionSeq> flat;
  for (const AttentionSeq& s : seqs) {
    k.push_back(gather(kv, s, kv.k_offset, row_elems));
    v.push_back(gather(kv, s, kv.v_offset, row_elems));
    flat.push_back({&k.back(), &v.back(), s.q_begin, s.n_q, s.n_kv});
  }
  ops::attention_seqs(q, flat, q_positions, p, out);
}

}  // namespace cairn::ops::cpu
