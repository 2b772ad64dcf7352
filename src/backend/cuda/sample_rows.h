// Logits processors and the sampling chain on the GPU, a block per row.
// Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's, the
// launch rules cuda_runtime.h's (host outputs: copied back before it returns).
#pragma once

#include <span>

#include "backend/ops.h"

namespace cairn::cuda {

void sample_rows(Tensor& logits, std::span<const ops::SampleRow> rows,
                 const ops::SampleOutputs& out);

}  // namespace cairn::cuda
