// Elementwise f32 ops on the GPU: add, scale, softcap.
// Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's, the
// launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void add(const Tensor& a, const Tensor& b, Tensor& y);
void scale(Tensor& x, float s);
void softcap(Tensor& x, float cap);

}  // namespace cairn::cuda
