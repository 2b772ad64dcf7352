// Registers the CUDA op table (op_table.h). Every entry launches on
// cuda::stream() and returns without waiting (cuda_runtime.h).
#pragma once

namespace cairn::cuda {

void register_cuda_ops();

}  // namespace cairn::cuda
