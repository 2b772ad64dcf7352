// Many row blocks of f32 K/V encoded into affine-quantized rows (ops::KvRowQuant) in one
// launch. Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's, the launch
// rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void quantize_rows(std::span<const ops::RowCopy> copies, const ops::KvRowQuant& q);

}  // namespace cairn::cuda
