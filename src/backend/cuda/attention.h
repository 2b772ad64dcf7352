// Causal attention on the GPU (GQA, sliding window, softcap), K/V in f32, bf16 or f16.
// Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's, the
// launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void attention(const Tensor& q, const Tensor& k, const Tensor& v,
               std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
               const ops::AttentionParams& p, Tensor& out);

}  // namespace cairn::cuda
