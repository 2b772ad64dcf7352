// y = x · wᵀ (+ bias) on the GPU: cuBLASLt GEMM with a fixed algorithm per shape class, GEMV
// kernels for small batches. Entry of the CUDA op table (cuda_ops.cpp); the contract is ops.h's,
// the launch rules cuda_runtime.h's.
#pragma once

#include "backend/ops.h"

namespace cairn::cuda {

void matmul(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y);
// ops::matmul_input_dtype: w's dtype for the batch-invariant mode's half-precision products
// (which round x to it), f32 otherwise (the GEMV kernels read f32 x).
DType matmul_input_dtype(const Tensor& w);

// The batch-invariant switch (default on). On: row i of y is bitwise the same whatever the
// number of rows n — one cuBLASLt algorithm per weight shape class (m, k, dtype) serves every
// n (docs/determinism.md). Off: GEMV kernels for n ≤ 8 and the heuristic's best algorithm per
// shape for larger n, faster, but a row's last bits may change with n. Process-wide; set it
// before the first matmul of a run, not while ops are in flight.
void set_batch_invariant(bool on);
bool batch_invariant();

}  // namespace cairn::cuda
