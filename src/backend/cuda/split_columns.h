// ops::split_columns on the GPU: one strided (2-D) device copy per part, ordered
// on the ops' stream. Entry of the CUDA op table (cuda_ops.cpp).
#pragma once

#include <span>

#include "backend/ops.h"

namespace cairn::cuda {

void split_columns(const Tensor& x, std::span<Tensor* const> parts);

}  // namespace cairn::cuda
