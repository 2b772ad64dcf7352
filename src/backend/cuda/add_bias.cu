#include "backend/cuda/add_bias.h"
#include "backend/cuda/cuda_runtime.h"

namespace cairn::cuda {
namespace {

__global__ void add_bias_kernel(float* __restrict__ y, const float* __restrict__ bias,
                                int64_t total, int64_t m) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = __fadd_rn(y[i], bias[i % m]);
}

}  // namespace

void add_bias_rows(float* y, const float* bias, int64_t n, int64_t m) {
  const int64_t total = n * m;
  if (total == 0) return;
  const unsigned grid = blocks_for(total) > 65535u * 8 ? 65535u * 8 : blocks_for(total);
  add_bias_kernel<<<grid, kBlock, 0, stream()>>>(y, bias, total, m);
  check_launch("add_bias_kernel");
}

}  // namespace cairn::cuda
