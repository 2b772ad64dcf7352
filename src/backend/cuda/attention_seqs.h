// Causal attention of many sequences in one launch (one split and one combine
// launch on the split path). Entry of the CUDA op table (cuda_ops.cpp); the
// contract is ops.h's, the launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void attention_seqs(const Tensor& q, std::span<const ops::AttentionSeq> seqs,
                    std::span<const int32_t> q_positions, const ops::AttentionParams& p,
                    Tensor& out);
// The same over paged K/V (ops::KvPages): the page table is uploaded with the call.
void attention_pages(const Tensor& q, const ops::KvPages& kv,
                     std::span<const ops::AttentionSeq> seqs, std::span<const int32_t> q_positions,
                     const ops::AttentionParams& p, Tensor& out);

}  // namespace cairn::cuda
