// SiLU- and GELU(tanh)-gated MLP activation on the GPU.
// Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's, the
// launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void gated_activation(const Tensor& gate, const Tensor& up, ops::Activation act, Tensor& out);
void gated_activation_fused(const Tensor& gate_up, ops::Activation act, Tensor& out);

}  // namespace cairn::cuda
