// wgmma_gemm (wgmma_gemm.h): a block of G warpgroups computes y[r0 : r0 + N, c0 : c0 + 64G]
// over k-tiles of 64 in S shared-memory stages (wgmma_tile.cuh). Tiles are loaded S − 2 ahead, by
// every thread (cp.async) or by the tensor memory accelerator (one thread issues a stage's two
// boxes, which complete on the stage's barrier; tma.cuh). Per k-tile the warpgroup issues its k16
// steps in increasing k as one group and leaves it running while the next tile's barrier and
// copies are issued (one group in flight, so the stage a refill takes is that of two tiles
// back). An output (i, j) of a tensor-core step reads row i of A and column j of B alone, so
// rows of w past m and of x past n (stale shared memory, or the accelerator's zeros) reach only
// outputs that are never stored. A cut k (gemm_order.h; off by default) runs wgmma_cut_kernel;
// the tiles of several k-tiles a stage are wgmma_stream.cu's.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/gemm_order.h"
#include "backend/cuda/mma_tile.cuh"
#include "backend/cuda/tensor_map.h"
#include "backend/cuda/tma.cuh"
#include "backend/cuda/wgmma.cuh"
#include "backend/cuda/wgmma_gemm.h"
#include "backend/cuda/wgmma_stream.h"
#include "backend/cuda/wgmma_tile.cuh"

namespace cairn::cuda {
namespace {

using wgt::issue_tile;
using wgt::Maps;
using wgt::store_tile;
using wgt::Wg;

// Tile kt's copies into stage `stage`: by every thread (cp.async, one commit group a tile), or
// by thread 0 (two boxes completing on barrier `bar`).
template <class C, typename T, bool Tma>
__device__ __forceinline__ void load_tile(uint32_t stage, uint32_t bar, const ThinProblem& p,
                                          const Maps& maps, int x0, int w0, int kt) {
  if constexpr (Tma) {
    if (threadIdx.x != 0) return;
    tma::arrive_expect(bar, C::kStageBytes);
    tma::load_2d(stage, &maps.w, kt * C::kTileK, w0, bar);
    tma::load_2d(stage + C::kABytes, &maps.x, kt * C::kTileK, x0, bar);
  } else {
    (void)bar;
    (void)maps;
    mma::copy_rows<C, C::kBM>(stage, static_cast<const T*>(p.w), w0, p.m, p.k, kt);
    mma::copy_rows<C, C::kN>(stage + C::kABytes, static_cast<const T*>(p.x), x0, p.n, p.k, kt);
    mma::commit();
  }
}

// Until tile kt is in its stage (barrier `bar`; S − 2 tiles loaded ahead) and visible to wgmma.
template <bool Tma, int S>
__device__ __forceinline__ void wait_tile(uint32_t bar, int kt) {
  if constexpr (Tma) {
    tma::wait(bar, static_cast<uint32_t>(kt / S) & 1);
  } else {
    (void)bar;
    mma::wait_pending<S - 3>();
    wg::fence_proxy_async();
  }
}

template <class C, typename T, int S, bool Tma>
__global__ void __launch_bounds__(C::kThreads)
    wgmma_gemm_kernel(ThinProblem p, const __grid_constant__ Maps maps) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = (mma::shared_address(smem) + 1023) & ~1023u;
  const uint32_t bars = base + S * C::kStageBytes;  // stage s's barrier: bars + 8s
  const int x0 = static_cast<int>(blockIdx.x) * C::kN, w0 = static_cast<int>(blockIdx.y) * C::kBM;
  const uint32_t a_off = static_cast<uint32_t>(threadIdx.x) / 128 * 64 * C::kRowBytes;
  const int tiles_k = (p.k + C::kTileK - 1) / C::kTileK;
  if (Tma && threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) tma::barrier_init(bars + 8 * s, 1);
    tma::fence_barrier_init();
  }
  if (Tma) __syncthreads();
  auto load = [&](int kt) {
    if (kt < tiles_k)
      load_tile<C, T, Tma>(base + kt % S * C::kStageBytes, bars + 8 * (kt % S), p, maps, x0, w0,
                           kt);
    else if (!Tma)
      mma::commit();  // an empty group keeps wait_pending's count
  };
  for (int s = 0; s < S - 2; ++s) load(s);
  float acc[C::kN / 2] = {};
  for (int kt = 0; kt < tiles_k; ++kt) {
    wait_tile<Tma, S>(bars + 8 * (kt % S), kt);
    // Tile kt is in; every warpgroup's group of tile kt - 2 is done (the wait below), so its
    // stage is refilled; tile kt - 1's group may still run.
    __syncthreads();
    load(kt + S - 2);
    issue_tile<C, T>(base + kt % S * C::kStageBytes, a_off,
                     min(C::kTileK / 16, (p.k - kt * C::kTileK) / 16), acc);
    wg::wait<1>();
    wg::pin(acc);
  }
  wg::wait<0>();
  wg::pin(acc);
  store_tile<C>(p, x0, w0, acc);
}

// y = (first + second) + bias for a cut k.
template <class C>
__device__ __forceinline__ void store_cut(const ThinProblem& p, int x0, int w0,
                                          float (&first)[C::kN / 2],
                                          const float (&second)[C::kN / 2]) {
#pragma unroll
  for (int i = 0; i < C::kN / 2; ++i) first[i] += second[i];
  store_tile<C>(p, x0, w0, first);
}

// A cut k (gemm_order.h): the k-tiles in TileOrder, the parts taking turns, each into its own
// accumulators, so the group left running is the other part's.
template <class C, typename T, int S, bool Tma>
__global__ void __launch_bounds__(C::kThreads)
    wgmma_cut_kernel(ThinProblem p, const __grid_constant__ Maps maps, int cut) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = (mma::shared_address(smem) + 1023) & ~1023u;
  const uint32_t bars = base + S * C::kStageBytes;  // stage s's barrier: bars + 8s
  const int x0 = static_cast<int>(blockIdx.x) * C::kN, w0 = static_cast<int>(blockIdx.y) * C::kBM;
  const uint32_t a_off = static_cast<uint32_t>(threadIdx.x) / 128 * 64 * C::kRowBytes;
  const TileOrder order = TileOrder::of(p.k, cut, C::kTileK);
  if (Tma && threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) tma::barrier_init(bars + 8 * s, 1);
    tma::fence_barrier_init();
  }
  if (Tma) __syncthreads();
  auto load = [&](int j) {  // position j of the order, into stage j % S
    if (j < order.end)
      load_tile<C, T, Tma>(base + j % S * C::kStageBytes, bars + 8 * (j % S), p, maps, x0, w0,
                           order.tile(j));
    else if (!Tma)
      mma::commit();
  };
  for (int s = 0; s < S - 2; ++s) load(s);
  float first[C::kN / 2] = {}, second[C::kN / 2] = {};
  for (int j = 0; j < order.end; ++j) {
    wait_tile<Tma, S>(bars + 8 * (j % S), j);
    __syncthreads();  // as wgmma_gemm_kernel's loop, by position
    load(j + S - 2);
    const uint32_t stage = base + j % S * C::kStageBytes;
    const int steps = min(C::kTileK / 16, (p.k - order.tile(j) * C::kTileK) / 16);
    if (order.part(j) == 0)
      issue_tile<C, T>(stage, a_off, steps, first);
    else
      issue_tile<C, T>(stage, a_off, steps, second);
    wg::wait<1>();
    wg::pin(first);
    wg::pin(second);
  }
  wg::wait<0>();
  wg::pin(first);
  wg::pin(second);
  store_cut<C>(p, x0, w0, first, second);
}

template <int G, int N, int S, bool Tma, typename T>
void launch(const ThinProblem& p, int cut) {
  using C = Wg<G, N, S>;
  Maps maps{};
  if (Tma) {
    constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
    maps.w = tile_map_128b(p.w, p.m, p.k, C::kBM, kBf16);
    maps.x = tile_map_128b(p.x, p.n, p.k, N, kBf16);
  }
  // x tiles inner: the blocks of one w tile run together and read it from DRAM once.
  const dim3 grid((p.n + N - 1) / N, (p.m + C::kBM - 1) / C::kBM);
  // Not overlapped with the kernel ahead, as mma_gemm's tiles (mma_gemm.cu).
  if (cut < p.k) {
    static const bool allowed = (allow_smem(wgmma_cut_kernel<C, T, S, Tma>, C::kSmem), true);
    (void)allowed;
    wgmma_cut_kernel<C, T, S, Tma><<<grid, C::kThreads, C::kSmem, stream()>>>(p, maps, cut);
    return check_launch("wgmma_cut_kernel");
  }
  static const bool allowed = (allow_smem(wgmma_gemm_kernel<C, T, S, Tma>, C::kSmem), true);
  (void)allowed;
  wgmma_gemm_kernel<C, T, S, Tma><<<grid, C::kThreads, C::kSmem, stream()>>>(p, maps);
  check_launch("wgmma_gemm_kernel");
}

struct Config {
  const char* name;
  void (*bf16)(const ThinProblem&, int);
  void (*f16)(const ThinProblem&, int);
};

#define CAIRN_WG(G, N, S, BM)                                                                   \
  Config{"wg" #N "x" #BM "s" #S, launch<G, N, S, false, __nv_bfloat16>,                         \
         launch<G, N, S, false, __half>},                                                       \
      Config {                                                                                  \
    "wt" #N "x" #BM "s" #S, launch<G, N, S, true, __nv_bfloat16>, launch<G, N, S, true, __half> \
  }
// From MatmulBench.TileSweep on an H200 (docs/performance.md): the tiles that won a Llama-8B
// product at 32-128 rows, and one for sweeps; each loaded by the accelerator ("wt", the
// default) and by cp.async ("wg"). 12-16 stages (~192 KiB) keep twice the loads in flight of 6,
// but only one block fits an SM.
const Config kConfigs[] = {CAIRN_WG(1, 32, 16, 64),  CAIRN_WG(1, 64, 12, 64),
                           CAIRN_WG(1, 64, 6, 64),   CAIRN_WG(2, 64, 4, 128),
                           CAIRN_WG(2, 128, 6, 128), CAIRN_WG(1, 128, 8, 64)};
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

namespace {
// CAIRN_WGMMA: 0 (off), cp (the cp.async-loaded tiles), tma (the accelerator-loaded ones of
// wgmma_gemm_kernel alone), ws<suffix> (wgmma_gemm_pick), else the default.
std::string env_mode() {
  const char* v = std::getenv("CAIRN_WGMMA");
  return v ? v : "";
}
}  // namespace

bool wgmma_gemm_on() {
  static const bool on = wgmma_gemm_available() && env_mode() != "0";
  return on;
}

const char* wgmma_gemm_family() {
  static const char* family = env_mode() == "cp"                                      ? "wg"
                              : env_mode() == "tma" || env_mode().rfind("ws", 0) == 0 ? "wt"
                                                                                      : "ws";
  return family;
}

// Configs past kConfigCount are wgmma_stream's.
int wgmma_gemm_configs() {
  return kConfigCount + wgmma_stream_configs();
}

const char* wgmma_gemm_name(int config) {
  return config < kConfigCount ? kConfigs[config].name : wgmma_stream_name(config - kConfigCount);
}

namespace {
// Wide products (gate|up, the LM head): 64 rows of x by 128 of w a block, past 64 rows of x
// 128 by 128. The rest: the narrowest x tile whose blocks fit the GPU in one wave (at 12-16
// stages), else 64 by 64 at 6 stages, two blocks an SM (q|k|v at 128 rows: 30.9 µs against
// 49.3 at 12 stages on an H200). The thinnest product step chain per SM wins: a block's k16
// steps run one after another, ~100 ns each.
int own_pick(int64_t n, int64_t m) {
  static const int first = std::string(wgmma_gemm_family()) == "wg" ? 0 : 1;
  const auto fits = [&](int64_t rows) {
    return (n + rows - 1) / rows * ((m + 63) / 64) <= sm_count();
  };
  if (m >= kWideRows) return 2 * (n <= 64 ? 3 : 4) + first;
  return 2 * (fits(32) ? 0 : fits(64) ? 1 : 2) + first;
}

// The wgmma_stream config of accelerator tile `config`'s rows, with `suffix` in its name and
// as many k-tiles in flight (S · KT), where there is one, else `config`.
int same_depth(int config, const std::string& suffix) {
  const std::string own = kConfigs[config].name;
  if (suffix.empty() || own.rfind("wt", 0) != 0) return config;
  const size_t at_s = own.find('s');
  const int depth = std::atoi(own.c_str() + at_s + 1);
  const std::string rows = "ws" + own.substr(2, at_s - 1);  // "ws64x64s"
  for (int c = 0; c < wgmma_stream_configs(); ++c) {
    const std::string name = wgmma_stream_name(c);
    if (name.rfind(rows, 0) != 0 || name.find(suffix) == std::string::npos) continue;
    const size_t at_k = name.rfind('k');
    if (std::atoi(name.c_str() + rows.size()) * std::atoi(name.c_str() + at_k + 1) == depth)
      return kConfigCount + c;
  }
  return config;
}

// The streamed config named `name`.
int stream_config(const char* name) {
  for (int c = 0; c < wgmma_stream_configs(); ++c)
    if (std::string(wgmma_stream_name(c)) == name) return kConfigCount + c;
  throw std::logic_error(std::string("no streamed wgmma tile ") + name);
}

// A narrow product whose k is cut and joined runs twice the blocks, each half the chain: 32 rows
// of x by 64 of w while both parts' blocks fit the GPU once at one block an SM (8 stages), then
// twice at two (4 stages), else 64 by 64 at 3 stages, two an SM (H200, µs a joined down
// product at 64 / 128 rows: 48 / 80 on ws32x64s4k2w1, 51 / 73 on ws64x64s6k2w1, 57 / 66 on
// ws64x64s3k2w1, 73 / 68 on ws128x64s4k2w1; docs/performance-gpu-history-3.md, 2026-12-06, the
// join).
int joined_pick(int64_t n, int64_t m) {
  static const int picks[3] = {stream_config("ws32x64s8k2w1"), stream_config("ws32x64s4k2w1"),
                               stream_config("ws64x64s3k2w1")};
  const int64_t blocks = 2 * ((n + 31) / 32) * ((m + 63) / 64);  // both parts, 32 rows of x
  return picks[blocks <= sm_count() ? 0 : blocks <= 2 * sm_count() ? 1 : 2];
}
}  // namespace

// The tiles of one block an SM (12-16 stages; the narrow products up to the rows that fill
// the GPU once) take 2 k-tiles a stage, loaded by a warp of their own (wgmma_stream): a
// block's time was per k-tile more than per byte (down at 128 rows 80.3 → 60.5 µs, at 64
// 69.2 → 53.7; o 30.5 → 27.3 and 27.6 → 25.7 on an H200). CAIRN_WGMMA=tma: own_pick's alone;
// CAIRN_WGMMA=ws<suffix> (e.g. wsk1w2): every accelerator tile as same_depth's (comparisons).
int wgmma_gemm_pick(int64_t n, int64_t m, bool joined) {
  if (joined && m < kWideRows && std::string(wgmma_gemm_family()) == "ws") return joined_pick(n, m);
  // own_pick's config → the one taken instead, found once
  static const std::vector<int> instead = [] {
    const std::string mode = env_mode(), family = wgmma_gemm_family();
    std::vector<int> table(kConfigCount);
    for (int c = 0; c < kConfigCount; ++c) {
      const std::string name = kConfigs[c].name;
      const bool one_an_sm = std::atoi(name.c_str() + name.find('s') + 1) >= 12;
      table[c] = mode.rfind("ws", 0) == 0      ? same_depth(c, mode.substr(2))
                 : family == "ws" && one_an_sm ? same_depth(c, "k2w1")
                                               : c;
    }
    return table;
  }();
  return instead[own_pick(n, m)];
}

void wgmma_gemm(const ThinProblem& p, int cut, bool bf16, int config) {
  if (p.n == 0 || p.m == 0) return;
  if (config >= kConfigCount)  // a streamed tile (a cut k: two launches, wgmma_stream.cu)
    return wgmma_stream(p, bf16, config - kConfigCount, cut);
  (bf16 ? kConfigs[config].bf16 : kConfigs[config].f16)(p, cut);
}

}  // namespace cairn::cuda
