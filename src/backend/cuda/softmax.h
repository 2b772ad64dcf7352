// Row-wise softmax and log-softmax on the GPU, one block per row.
// Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's, the
// launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void softmax(const Tensor& x, Tensor& y);
void log_softmax(const Tensor& x, Tensor& y);

}  // namespace cairn::cuda
