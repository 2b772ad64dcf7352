// Whether cuBLASLt's fixed algorithm of a weight's shape class (gemm_lt.h) computes the bits of
// the fixed-order tensor-core GEMM (mma_gemm.h). Both reduce each output over k in m16n8k16-
// sized steps from zero without splitting k; where their bits agree, matmul may take either at
// any n without a row's bits depending on n, so large batches take cuBLASLt's faster kernels
// and small ones the tensor-core GEMM's weight streaming. Asked once per shape class, on the
// weight itself and random rows of x; no agreement (or no answer) keeps the tensor-core GEMM.
#pragma once

#include "backend/cuda/gemm_lt.h"
#include "core/tensor.h"

namespace cairn::cuda {

// Rows of x the probe multiplies.
constexpr int64_t kAgreementProbeRows = 64;

// `cls`: w's shape class (n ignored). bias: the call's bias (f32 [m]) or null. False, without
// probing, while stream() is being captured into a graph (the probe synchronizes); then the
// next call outside capture probes. Uses round_input's buffer: call before rounding the x to
// multiply.
bool lt_agrees_with_mma(const GemmLtShape& cls, const Tensor& w, const float* bias);

}  // namespace cairn::cuda
