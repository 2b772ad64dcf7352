// Registers the CUDA op table (op_table.h). Every entry launches on
// cuda::stream() and returns without waiting (cuda_runtime.h).
#pragma once

namespace cairn::cuda {

void register_cuda_ops();

// The fused inputs: the q|k|v split with RoPE in one pass (ops::split_rope) and the products'
// inputs written rounded by the norms and the gated activation (ops::matmul_input_dtype), the
// same bits as the separate passes (tests/gpu/models/fused_inputs_test.cpp). On by default
// (docs/cuda-ops.md: +6% on an 8B 4k prefill); CAIRN_CUDA_FUSED_INPUTS=0 turns them off at
// start-up. set_fused_inputs re-registers the table: call it before a run's first op, not while ops
// are in flight or an op profile is open.
bool fused_inputs();
void set_fused_inputs(bool on);

}  // namespace cairn::cuda
