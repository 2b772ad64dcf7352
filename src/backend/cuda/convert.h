// Dtype conversion between same-shaped contiguous f32/bf16/f16 device tensors.
// Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's, the
// launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void convert(const Tensor& src, Tensor& dst);

}  // namespace cairn::cuda
