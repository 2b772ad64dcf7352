#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/nccl/rank_sum.h"

namespace cairn::cuda {
namespace {

__global__ void rank_sum_kernel(const float* parts, int n_ranks, int64_t count, float* out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float sum = parts[i];
    for (int r = 1; r < n_ranks; ++r) sum = __fadd_rn(sum, parts[r * count + i]);
    out[i] = sum;
  }
}

}  // namespace

void rank_order_sum(const float* parts, int n_ranks, int64_t count, float* out,
                    cudaStream_t stream) {
  if (count == 0) return;
  unsigned grid = blocks_for(count) > 65535u * 8 ? 65535u * 8 : blocks_for(count);
  rank_sum_kernel<<<grid, kBlock, 0, stream>>>(parts, n_ranks, count, out);
  check_launch("rank_sum_kernel");
}

}  // namespace cairn::cuda
