// Rotary position embedding on the GPU: half-split and interleaved pairs, partial rotary.
// Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's, the
// launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void rope(Tensor& x, std::span<const int32_t> positions, const ops::RopeParams& p);

}  // namespace cairn::cuda
