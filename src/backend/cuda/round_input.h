// The x operand of a half-precision GEMM: cuBLASLt multiplies bf16 by bf16 and f16 by f16
// (f32 accumulation), not f32 by bf16, so matmul rounds its f32 activations to the weights'
// dtype first (round to nearest even), into a scratch buffer of this file.
#pragma once

#include "core/tensor.h"

namespace cairn::cuda {

// x f32 [n, k] contiguous on the device, rounded to `dtype` (bf16 or f16; x already of that
// dtype is copied): a device pointer
// into a scratch buffer (cudaMallocAsync-aligned), valid for work issued on stream() before the
// next call. Grows the buffer when needed; growing during graph capture is an Error(kUnsupported).
const void* round_input(const Tensor& x, DType dtype);

}  // namespace cairn::cuda
