// wgmma_gemm (wgmma_gemm.h): a block of G warpgroups computes y[r0 : r0 + N, c0 : c0 + 64G]
// transposed — warpgroup g's wgmma A operand is 64 rows of w, its B operand the block's N rows
// of x, D[w row][x row] — over k-tiles of 64 in S shared-memory stages, in mma_tile.cuh's
// swizzled layout, which is wgmma's 128-byte swizzle. Every thread copies (cp.async) S − 2
// tiles ahead; per k-tile the warpgroup issues its k16 steps in increasing k as one group and
// leaves it running while the next tile's barrier and copies are issued (one group in flight,
// so the stage a refill takes is that of two tiles back). An output (i, j) of a tensor-core
// step reads row i of A and column j of B alone, so rows of w past m and of x past n (never
// copied: stale shared memory) reach only outputs that are never stored.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdlib>
#include <string>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/mma_tile.cuh"
#include "backend/cuda/wgmma.cuh"
#include "backend/cuda/wgmma_gemm.h"

namespace cairn::cuda {
namespace {

template <int G, int N, int S>
struct Wg {
  static constexpr int kBM = 64 * G;  // rows of w a block
  static constexpr int kN = N;        // rows of x a block
  static constexpr int kThreads = 128 * G;
  static constexpr int kTileK = 64, kRowBytes = 128, kChunksPerRow = 8;
  static constexpr int kABytes = kBM * kRowBytes, kStageBytes = (kBM + N) * kRowBytes;
  static constexpr int kSmem = kStageBytes * S + 1024;  // + slack to align the stages to 1 KiB
  static_assert(kStageBytes % 1024 == 0 && N % 32 == 0 && S >= 3);
};

template <class C, typename T>
__device__ __forceinline__ void load_stage(uint32_t stage, const ThinProblem& p, int x0, int w0,
                                           int kt) {
  mma::copy_rows<C, C::kBM>(stage, static_cast<const T*>(p.w), w0, p.m, p.k, kt);
  mma::copy_rows<C, C::kN>(stage + C::kABytes, static_cast<const T*>(p.x), x0, p.n, p.k, kt);
}

// Thread t's register 4j + e holds w row 16(t / 32 % 4) + (t % 32) / 4 + 8(e / 2) of its
// warpgroup's 64, x row 8j + 2(t % 4) + e % 2 (wgmma.cuh).
template <class C>
__device__ __forceinline__ void store_tile(const ThinProblem& p, int x0, int w0,
                                           const float (&acc)[C::kN / 2]) {
  const int t = static_cast<int>(threadIdx.x), lane = t % 32;
  const int w_row = w0 + t / 128 * 64 + t / 32 % 4 * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < C::kN / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = x0 + 8 * j + 2 * (lane % 4) + e % 2, col = w_row + 8 * (e / 2);
      if (row >= p.n || col >= p.m) continue;
      const float v = acc[4 * j + e];
      p.y[static_cast<int64_t>(row) * p.m + col] = p.bias ? v + p.bias[col] : v;
    }
}

template <class C, typename T, int S>
__global__ void __launch_bounds__(C::kThreads) wgmma_gemm_kernel(ThinProblem p) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = (mma::shared_address(smem) + 1023) & ~1023u;
  const int x0 = static_cast<int>(blockIdx.x) * C::kN, w0 = static_cast<int>(blockIdx.y) * C::kBM;
  const uint32_t a_off = static_cast<uint32_t>(threadIdx.x) / 128 * 64 * C::kRowBytes;
  const int tiles_k = (p.k + C::kTileK - 1) / C::kTileK;
  for (int s = 0; s < S - 2; ++s) {
    if (s < tiles_k) load_stage<C, T>(base + s * C::kStageBytes, p, x0, w0, s);
    mma::commit();
  }
  float acc[C::kN / 2] = {};
  for (int kt = 0; kt < tiles_k; ++kt) {
    mma::wait_pending<S - 3>();
    wg::fence_proxy_async();
    // Tile kt is in; every warpgroup's group of tile kt - 2 is done (the wait below), so its
    // stage is refilled; tile kt - 1's group may still run.
    __syncthreads();
    const int next = kt + S - 2;
    if (next < tiles_k) load_stage<C, T>(base + next % S * C::kStageBytes, p, x0, w0, next);
    mma::commit();
    const uint32_t stage = base + kt % S * C::kStageBytes;
    const uint64_t a = wg::tile_descriptor(stage + a_off);
    const uint64_t b = wg::tile_descriptor(stage + C::kABytes);
    const int steps = min(C::kTileK / 16, (p.k - kt * C::kTileK) / 16);
    wg::pin(acc);
    wg::fence();
    if (steps == C::kTileK / 16) {
#pragma unroll
      for (int s = 0; s < C::kTileK / 16; ++s) wg::wgmma_k16<T, C::kN>(acc, a + 2 * s, b + 2 * s);
    } else {  // the last k-tile of a k that is not a multiple of 64
      for (int s = 0; s < steps; ++s) wg::wgmma_k16<T, C::kN>(acc, a + 2 * s, b + 2 * s);
    }
    wg::commit();
    wg::wait<1>();
    wg::pin(acc);
  }
  wg::wait<0>();
  wg::pin(acc);
  store_tile<C>(p, x0, w0, acc);
}

template <int G, int N, int S, typename T>
void launch(const ThinProblem& p) {
  using C = Wg<G, N, S>;
  auto* kernel = wgmma_gemm_kernel<C, T, S>;
  static const bool allowed = (allow_smem(kernel, C::kSmem), true);
  (void)allowed;
  // x tiles inner: the blocks of one w tile run together and read it from DRAM once.
  const dim3 grid((p.n + N - 1) / N, (p.m + C::kBM - 1) / C::kBM);
  // Not overlapped with the kernel ahead, as mma_gemm's tiles (mma_gemm.cu).
  kernel<<<grid, C::kThreads, C::kSmem, stream()>>>(p);
  check_launch("wgmma_gemm_kernel");
}

struct Config {
  const char* name;
  void (*bf16)(const ThinProblem&);
  void (*f16)(const ThinProblem&);
};

#define CAIRN_WG(G, N, S, BM)                                                       \
  Config {                                                                          \
    "wg" #N "x" #BM "s" #S, launch<G, N, S, __nv_bfloat16>, launch<G, N, S, __half> \
  }
// From MatmulBench.TileSweep on an H100 (docs/performance.md): the tiles that won a Llama-8B
// product at 32-128 rows, and two for sweeps. 12 stages (192 KiB) keep twice the loads in
// flight of 6 (96 KiB), but only one block fits an SM.
const Config kConfigs[] = {CAIRN_WG(1, 64, 6, 64),   CAIRN_WG(1, 64, 12, 64),
                           CAIRN_WG(2, 128, 6, 128), CAIRN_WG(1, 32, 16, 64),
                           CAIRN_WG(1, 128, 8, 64),  CAIRN_WG(2, 64, 4, 128)};
#undef CAIRN_WG
constexpr int kConfigCount = static_cast<int>(sizeof(kConfigs) / sizeof(kConfigs[0]));

}  // namespace

bool wgmma_gemm_available() {
  static const bool available = [] {
    int dev = 0, major = 0, minor = 0;
    CAIRN_CUDA_CHECK(cudaGetDevice(&dev));
    CAIRN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    CAIRN_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    return major == 9 && minor == 0;
  }();
  return available;
}

bool wgmma_gemm_on() {
  static const bool on = [] {
    const char* v = std::getenv("CAIRN_WGMMA");
    return wgmma_gemm_available() && !(v && std::string(v) == "0");
  }();
  return on;
}

int wgmma_gemm_configs() {
  return kConfigCount;
}

const char* wgmma_gemm_name(int config) {
  return kConfigs[config].name;
}

// Wide products (gate|up, the LM head): 64 rows of w a block up to 64 rows of x, then 128 by
// 128. The rest: 64 by 64, with 12 stages while the blocks fit the GPU in one wave, else 6 (two
// blocks an SM): q|k|v at 128 rows took 47 µs at 12 stages, 34.5 at 6.
int wgmma_gemm_pick(int64_t n, int64_t m) {
  if (m >= kWideRows) return n <= 64 ? 0 : 2;
  const int64_t blocks = ((n + 63) / 64) * ((m + 63) / 64);
  return blocks <= sm_count() ? 1 : 0;
}

void wgmma_gemm(const ThinProblem& p, bool bf16, int config) {
  if (p.n == 0 || p.m == 0) return;
  (bf16 ? kConfigs[config].bf16 : kConfigs[config].f16)(p);
}

}  // namespace cairn::cuda
