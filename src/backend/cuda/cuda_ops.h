// Registers the CUDA op table (op_table.h). Every entry launches on
// cuda::stream() and returns without waiting (cuda_runtime.h).
#pragma once

namespace cairn::cuda {

void register_cuda_ops();
// Replaces it with the table whose entries op_profile.h times.
void install_timed_ops();

}  // namespace cairn::cuda
