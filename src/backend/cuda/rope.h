// Rotary position embedding on the GPU: half-split and interleaved pairs, partial rotary; and
// fused with the split of a q|k|v product's output (split_rope).
// Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's, the
// launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void rope(Tensor& x, std::span<const int32_t> positions, const ops::RopeParams& p);
void split_rope(const Tensor& qkv, std::span<const int32_t> positions, const ops::RopeParams& p,
                Tensor& q, Tensor& k, Tensor& v, const ops::HeadNorms& norms);

}  // namespace cairn::cuda
