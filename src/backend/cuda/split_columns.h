// ops::split_columns on the GPU: every part in one launch on the ops' stream
// (split_columns.cu). Entry of the CUDA op table (cuda_ops.cpp).
#pragma once

#include <span>

#include "backend/ops.h"

namespace cairn::cuda {

void split_columns(const Tensor& x, std::span<Tensor* const> parts);

}  // namespace cairn::cuda
