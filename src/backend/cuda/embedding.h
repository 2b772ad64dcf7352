// Embedding lookup on the GPU: rows of a f32/bf16/f16 table gathered into f32.
// Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's, the
// launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void embedding(const Tensor& table, std::span<const int32_t> ids, Tensor& y);

}  // namespace cairn::cuda
