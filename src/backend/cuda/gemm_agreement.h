// Whether cuBLASLt's fixed algorithms, run in the fixed-order GEMM's order (gemm_order.h: one
// product a part of k, the second added onto the first, then the bias), compute the bits of
// the fixed-order tensor-core GEMM (mma_gemm.h). Both reduce each part over k in m16n8k16-
// sized steps from zero without splitting it; where their bits agree, matmul may take either at
// any n without a row's bits depending on n, so large batches take cuBLASLt's faster kernels
// and small ones the tensor-core GEMM's weight streaming. Asked once per shape class, on the
// weight itself and random rows of x; no agreement (or no answer) keeps the tensor-core GEMM.
#pragma once

#include "backend/cuda/gemm_lt.h"
#include "core/tensor.h"

namespace cairn::cuda {

// y [s.n, s.m] = x · wᵀ (+ bias) in gemm_order.h's order with each part's fixed algorithm (the
// bias in the epilogue when s.bias and k is one part, else added after). x and w: s.dtype,
// rows s.k apart. False, launching nothing, when a part's class has no fixed algorithm.
bool lt_fixed_order_run(const GemmLtShape& s, const void* w, const void* x, const float* bias,
                        float* y);

// Rows of x the probe multiplies.
constexpr int64_t kAgreementProbeRows = 64;

// `cls`: w's shape class (n ignored). bias: the call's bias (f32 [m]) or null. False, without
// probing, while stream() is being captured into a graph (the probe synchronizes); then the
// next call outside capture probes. Uses round_input's buffer: call before rounding the x to
// multiply.
bool lt_agrees_with_mma(const GemmLtShape& cls, const Tensor& w, const float* bias);

}  // namespace cairn::cuda
