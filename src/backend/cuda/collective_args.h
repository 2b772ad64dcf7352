// The argument checks the GPU groups' collectives share (peer_group.h, nccl/nccl_group.h).
#pragma once

#include "core/error.h"
#include "core/tensor.h"

namespace cairn::cuda {

// t's data, once t is a contiguous f32 CUDA tensor (Error(kInvalidArgument) naming `what`).
inline float* device_f32(const Tensor& t, const char* what) {
  if (t.dtype() != DType::kF32 || !t.is_contiguous() || t.device().kind != DeviceKind::kCuda)
    fail(ErrorCode::kInvalidArgument, "{}: expected a contiguous f32 CUDA tensor, got {}", what,
         t.describe());
  return t.data<float>();
}

// recv must hold n_ranks times send's elements.
inline void check_gather_sizes(const Tensor& send, const Tensor& recv, int n_ranks) {
  if (recv.numel() != send.numel() * n_ranks)
    fail(ErrorCode::kInvalidArgument, "all_gather: recv is {}, expected {} x {} elements",
         recv.describe(), n_ranks, send.numel());
}

}  // namespace cairn::cuda
