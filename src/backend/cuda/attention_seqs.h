// Causal attention of many sequences in one launch (one split and one combine
// launch on the split path). Entry of the CUDA op table (cuda_ops.cpp); the
// contract is ops.h's, the launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void attention_seqs(const Tensor& q, std::span<const ops::AttentionSeq> seqs,
                    std::span<const int32_t> q_positions, const ops::AttentionParams& p,
                    Tensor& out);

}  // namespace cairn::cuda
