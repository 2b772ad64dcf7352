// Many row blocks converted between f32/bf16/f16 device tensors in one launch
// (a batch's K/V appended to its sequences' caches). Entry of the CUDA op table
// (cuda_ops.cpp); the contract is ops.h's, the launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void convert_rows(std::span<const ops::RowCopy> copies);

}  // namespace cairn::cuda
