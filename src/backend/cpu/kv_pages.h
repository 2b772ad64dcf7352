// attention_pages on the CPU (both tables): each sequence's rows are gathered
// from its pages into one contiguous K and V, then attention_seqs runs over
// them, so a paged read equals a contiguous one by construction. The paged KV
// state attends its pages in place (kv/page_attention.h); this entry is the
// reference the device kernels are tested against.
#pragma once

#include <span>

#include "backend/ops.h"

namespace cairn::ops::cpu {

// ops::attention_pages; arguments checked (check_attention_pages).
void attention_pages(const Tensor& q, const KvPages& kv, std::span<const AttentionSeq> seqs,
                     std::span<const int32_t> q_positions, const AttentionParams& p, Tensor& out);

}  // namespace cairn::ops::cpu
