// The reduction half of the NCCL group's all-reduce: rows of a gathered
// [n_ranks, count] buffer added in rank order, as the in-process group does.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace cairn::cuda {

// out[i] = ((parts[0, i] + parts[1, i]) + parts[2, i]) + ... for i < count, each
// addition rounded on its own (no fused operations). parts [n_ranks, count] and
// out [count]: f32 device memory of the current device. Launches on `stream`.
void rank_order_sum(const float* parts, int n_ranks, int64_t count, float* out,
                    cudaStream_t stream);

}  // namespace cairn::cuda
