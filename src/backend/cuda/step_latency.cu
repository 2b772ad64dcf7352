// measure_k16_step_latency (step_latency.h): one block a chain, nothing else on the GPU.
#include <cuda_bf16.h>

#include <cstdint>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/mma_tile.cuh"
#include "backend/cuda/step_latency.h"
#include "backend/cuda/wgmma.cuh"
#include "backend/cuda/wgmma_gemm.h"
#include "backend/device.h"

namespace cairn::cuda {
namespace {

constexpr int kSteps = 4096;

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One warp. The operands come from `zeros` so that no step can be folded away.
__global__ void mma_chain_kernel(const uint32_t* zeros, float* out, uint64_t* ns) {
  const uint32_t a[4] = {zeros[0], zeros[1], zeros[2], zeros[3]}, b[2] = {zeros[4], zeros[5]};
  float d[4] = {};
  const uint64_t t0 = global_ns();
  for (int s = 0; s < kSteps; ++s) mma::mma_k16<__nv_bfloat16>(d, a, b);
  const uint64_t t1 = global_ns();
  out[threadIdx.x] = d[0] + d[1] + d[2] + d[3];
  if (threadIdx.x == 0) *ns = t1 - t0;
}

// One warpgroup over a zeroed 64 × 64 A tile and 64 × 64 B tile.
constexpr int kWgSmem = 16384 + 1024;
__global__ void wgmma_chain_kernel(float* out, uint64_t* ns) {
  extern __shared__ __align__(1024) uint8_t smem[];
  for (int i = static_cast<int>(threadIdx.x); i < kWgSmem / 4; i += blockDim.x)
    reinterpret_cast<float*>(smem)[i] = 0.0f;
  wg::fence_proxy_async();
  __syncthreads();
  const uint32_t base = (mma::shared_address(smem) + 1023) & ~1023u;
  const uint64_t a = wg::tile_descriptor(base), b = wg::tile_descriptor(base + 8192);
  float d[32] = {};
  const uint64_t t0 = global_ns();
  for (int g = 0; g < kSteps / 4; ++g) {
    wg::pin(d);
    wg::fence();
#pragma unroll
    for (int s = 0; s < 4; ++s) wg::wgmma_k16<__nv_bfloat16, 64>(d, a + 2 * s, b + 2 * s);
    wg::commit();
    wg::wait<1>();
    wg::pin(d);
  }
  wg::wait<0>();
  wg::pin(d);
  const uint64_t t1 = global_ns();
  float sum = 0.0f;
  for (float v : d) sum += v;
  out[threadIdx.x] = sum;
  if (threadIdx.x == 0) *ns = t1 - t0;
}

// ns a step of the last of 3 runs of `launch` (which writes the chain's ns to `ns`).
template <typename Launch>
double ns_a_step(uint64_t* ns, Launch launch) {
  for (int run = 0; run < 3; ++run) {
    launch();
    check_launch("k16 step latency");
  }
  uint64_t host = 0;
  CAIRN_CUDA_CHECK(cudaMemcpyAsync(&host, ns, sizeof host, cudaMemcpyDeviceToHost, stream()));
  CAIRN_CUDA_CHECK(cudaStreamSynchronize(stream()));
  return static_cast<double>(host) / kSteps;
}

}  // namespace

K16StepLatency measure_k16_step_latency() {
  const Device gpu{DeviceKind::kCuda, 0};
  Tensor zeros = empty_on(gpu, {64}, DType::kI32), out = empty_on(gpu, {128}, DType::kF32);
  Tensor ns = empty_on(gpu, {2}, DType::kI32);  // one u64
  CAIRN_CUDA_CHECK(cudaMemsetAsync(zeros.raw(), 0, zeros.nbytes(), stream()));
  auto* t = static_cast<uint64_t*>(ns.raw());
  K16StepLatency r;
  r.mma_sync_ns = ns_a_step(t, [&] {
    mma_chain_kernel<<<1, 32, 0, stream()>>>(static_cast<const uint32_t*>(zeros.raw()),
                                             out.data<float>(), t);
  });
  if (wgmma_gemm_available()) {
    allow_smem(wgmma_chain_kernel, kWgSmem);
    r.wgmma_ns = ns_a_step(
        t, [&] { wgmma_chain_kernel<<<1, 128, kWgSmem, stream()>>>(out.data<float>(), t); });
  }
  return r;
}

}  // namespace cairn::cuda
