// RMSNorm (alone or after the residual add) and LayerNorm on the GPU, one block per row.
// Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's, the
// launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void rms_norm(const Tensor& x, const Tensor& w, float eps, Tensor& y);
void layer_norm(const Tensor& x, const Tensor& w, const Tensor* b, float eps, Tensor& y);
void add_rms_norm(Tensor& x, const Tensor& r, const Tensor& w, float eps, Tensor& y);

}  // namespace cairn::cuda
