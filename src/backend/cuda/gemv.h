// Matmul by CUDA cores for few rows: y[n, m] = x[n, k] · w[m, k]ᵀ (+ bias[m]), x and y f32,
// w f32/bf16/f16 read in its stored dtype. One warp per weight row streams it once for up to
// kGemvMaxRows rows of x, with 16-byte loads when w, x and k allow. Each y element is reduced
// in one fixed order (lane l takes k-vectors l, l + 32, …, then a butterfly across lanes), so
// any n gives the same bits per row; larger n re-reads w once per group of kGemvMaxRows rows.
#pragma once

#include "core/tensor.h"

namespace cairn::cuda {

constexpr int kGemvMaxRows = 8;

// Launches on stream(); tensors on the device, contiguous, shapes checked by the caller.
void gemv(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y);

}  // namespace cairn::cuda
