// y = x · wᵀ (+ bias) on the GPU: cuBLASLt GEMM with a fixed algorithm per shape class, GEMV
// kernels for small batches. Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's,
// the launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void matmul(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y);

}  // namespace cairn::cuda
