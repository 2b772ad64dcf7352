// wgmma_stream (wgmma_stream.h): wgmma_gemm's tiles (wgmma_tile.cuh), KT k-tiles of 64 a stage,
// loaded by a warp of their own.
//
// One extra warp (lane 0) issues each stage's 2·KT boxes (tma.cuh) onto the stage's `full`
// barrier, as far ahead as the stages allow: before refilling stage s it waits on the stage's
// `empty` barrier, on which every consumer warp arrives once its warpgroup's group of the
// stage has completed. The consumer warpgroups wait on `full`, issue the stage's 4·KT k16 steps
// in increasing k as one group, and leave W groups running (wg::wait<W>), so the stage they
// release is the one W back. A block's time was more per k-tile than per byte (docs/cuda.md):
// 2 k-tiles a stage halve the waits, the commits and the barrier round trips per k16 step.
// Past k the boxes arrive as zeros (and count as bytes) and no step reads them.
//
// A cut k (gemm_order.h) runs its two parts at once, joined at the store (wgmma_join.cuh:
// blockIdx.z the part, a counter a tile): y = (first + second) + bias, each chain the one the
// two-accumulator cut kernels make (wgmma_gemm.cu) without their second register set, on twice
// the blocks with half the chain each. Where the join has no counters (more tiles than it holds,
// or none made yet during a graph capture) or is off (set_gemm_join), the same bits come from
// two launches over the parts' ranges of k (Part): the first part's chain into y, then the
// second's, added to it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/mma_tile.cuh"
#include "backend/cuda/rank_context.h"
#include "backend/cuda/tensor_map.h"
#include "backend/cuda/tma.cuh"
#include "backend/cuda/wgmma_join.cuh"
#include "backend/cuda/wgmma_stream.h"
#include "backend/cuda/wgmma_tile.cuh"

namespace cairn::cuda {
namespace {

using wgt::Maps;

// A tile C (wgt::Wg: 64G rows of w by N of x, S stages), KT k-tiles of 64 a stage, W + 1 of a
// warpgroup's groups (a stage each) in flight. A stage: the KT w tiles (64G rows of 128 bytes
// each), then the KT x tiles (N rows), each 1,024-byte aligned.
template <class C, int KT, int W>
struct Streamed {
  static constexpr int kKT = KT, kW = W, kS = C::kStages;
  static constexpr int kWBytes = C::kBM * C::kRowBytes, kXBytes = C::kN * C::kRowBytes;
  static constexpr int kStageBytes = KT * (kWBytes + kXBytes);
  static constexpr int kConsumerWarps = 4 * C::kG;
  static constexpr int kThreads = 32 * kConsumerWarps + 32;  // + the loading warp
  // the stages, 1 KiB of alignment slack, a full and an empty barrier a stage, the join's ticket
  static constexpr int kSmem = kStageBytes * kS + 1024 + 16 * kS + 16;
  static_assert(W >= 1 && W < kS && kSmem <= 227 * 1024);
};

// How a launch covers k: whole (the default's code), one part of a cut k a launch (Part), or
// both parts at once, joined (blockIdx.z the part).
enum class Cover { kWhole, kPart, kJoined };

// The range of k a block reduces, [begin, end), and whether its chain is added to y (the
// second part of a cut k in its own launch) or stored (the whole k: begin 0, end k, not added).
struct Part {
  int begin = 0, end = 0;
  bool add = false;
};

// The part of a cut k this block reduces: kPart's `given`, or for kJoined part blockIdx.z of
// the cut at given.end.
template <Cover kCover>
__device__ __forceinline__ Part part_of(const ThinProblem& p, const Part& given) {
  if constexpr (kCover == Cover::kWhole) return Part{0, p.k, false};
  if constexpr (kCover == Cover::kPart) return given;
  return blockIdx.z == 0 ? Part{0, given.end, false} : Part{given.end, p.k, false};
}

// Lane 0 of the loading warp: every stage's boxes, into stage j % S once the consumers have
// released its use before.
template <class C, class K>
__device__ void produce(const Maps& maps, uint32_t base, uint32_t full, uint32_t empty, int stages,
                        int k_begin) {
  const int x0 = static_cast<int>(blockIdx.x) * C::kN;
  const int w0 = static_cast<int>(blockIdx.y) * C::kBM;
  for (int j = 0; j < stages; ++j) {
    const int s = j % K::kS;
    if (j >= K::kS) tma::wait(empty + 8 * s, static_cast<uint32_t>(j / K::kS - 1) & 1);
    const uint32_t stage = base + s * K::kStageBytes, bar = full + 8 * s;
    tma::arrive_expect(bar, K::kStageBytes);
#pragma unroll
    for (int u = 0; u < K::kKT; ++u) {
      const int k0 = k_begin + (j * K::kKT + u) * C::kTileK;
      tma::load_2d(stage + u * K::kWBytes, &maps.w, k0, w0, bar);
      tma::load_2d(stage + K::kKT * K::kWBytes + u * K::kXBytes, &maps.x, k0, x0, bar);
    }
  }
}

// Warpgroup g = t / 128: w rows 64g of the block's, each stage's k16 steps as one group, in
// increasing k; W groups left running while the next is issued.
// counters: the join's (kJoined), else null; ticket: the join's shared int.
template <class C, class K, typename T>
__device__ void consume(const ThinProblem& p, uint32_t base, uint32_t full, uint32_t empty,
                        int stages, const Part& part, int* counters, int* ticket) {
  const uint32_t a_off = static_cast<uint32_t>(threadIdx.x) / 128 * 64 * C::kRowBytes;
  const uint32_t b_off = K::kKT * K::kWBytes;
  const bool lane0 = threadIdx.x % 32 == 0;
  float acc[C::kN / 2] = {};
  for (int j = 0; j < stages; ++j) {
    const int s = j % K::kS;
    const uint32_t stage = base + s * K::kStageBytes;
    tma::wait(full + 8 * s, static_cast<uint32_t>(j / K::kS) & 1);
    wg::pin(acc);
    wg::fence();
#pragma unroll
    for (int u = 0; u < K::kKT; ++u)
      wgt::k16_steps<T, C::kN>(
          wg::tile_descriptor(stage + u * K::kWBytes + a_off),
          wg::tile_descriptor(stage + b_off + u * K::kXBytes),
          max(0, min(4, (part.end - part.begin - (j * K::kKT + u) * C::kTileK) / 16)), acc);
    wg::commit();
    wg::wait<K::kW>();
    wg::pin(acc);
    if (j >= K::kW) tma::arrive(empty + 8 * ((j - K::kW) % K::kS), lane0);
  }
  wg::wait<0>();
  wg::pin(acc);
  if (counters)
    return wgt::join_tile<C, 32 * K::kConsumerWarps>(
        p, counters + blockIdx.y * gridDim.x + blockIdx.x, ticket, acc);
  wgt::store_tile<C>(p, static_cast<int>(blockIdx.x) * C::kN, static_cast<int>(blockIdx.y) * C::kBM,
                     acc, part.add);
}

// given: part_of's; counters: the join's, kJoined only.
template <class C, class K, typename T, Cover kCover>
__global__ void __launch_bounds__(K::kThreads)
    wgmma_stream_kernel(ThinProblem p, const __grid_constant__ Maps maps, Part given,
                        int* counters) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = (mma::shared_address(smem) + 1023) & ~1023u;
  const uint32_t full = base + K::kS * K::kStageBytes, empty = full + 8 * K::kS;
  int* ticket = reinterpret_cast<int*>(smem + (base - mma::shared_address(smem)) +
                                       K::kS * K::kStageBytes + 16 * K::kS);
  const Part part = part_of<kCover>(p, given);
  const int stages = ((part.end - part.begin + C::kTileK - 1) / C::kTileK + K::kKT - 1) / K::kKT;
  if (threadIdx.x == 0) {
    for (int s = 0; s < K::kS; ++s) {
      tma::barrier_init(full + 8 * s, 1);
      tma::barrier_init(empty + 8 * s, K::kConsumerWarps);
    }
    tma::fence_barrier_init();
  }
  __syncthreads();
  // The warp's role, as a value the compiler knows to be the same across the warp (a branch
  // it cannot see as uniform around the wgmma groups would make ptxas serialise them).
  const int warp = __shfl_sync(~0u, static_cast<int>(threadIdx.x) / 32, 0);
  if (warp < K::kConsumerWarps)
    consume<C, K, T>(p, base, full, empty, stages, part,
                     kCover == Cover::kJoined ? counters : nullptr, ticket);
  else if (threadIdx.x % 32 == 0)
    produce<C, K>(maps, base, full, empty, stages, part.begin);
}

std::atomic<int64_t> g_joined_launches{0};
std::atomic<bool> g_join{std::getenv("CAIRN_GEMM_JOIN") == nullptr ||
                         std::string(std::getenv("CAIRN_GEMM_JOIN")) != "0"};

// The join's counters, one a tile, zero between launches; one set a context (rank_context.h),
// as its launches are ordered on its stream. Made the first time a cut product asks outside a
// graph capture; only narrow products are cut (fewer than 16,384 rows of w: at most 1,024 tiles
// of 64 rows at 128 rows of x in 32s), so 16,384 leaves room for any tile.
struct JoinCounters {
  int* counters = nullptr;
  std::mutex mutex;
};
constexpr int64_t kJoinTiles = 16384;

// The counters for `tiles` tiles, or null: the join off, too many tiles, or none made yet
// while the stream captures (the two launches then give the same bits).
int* join_counters(int64_t tiles) {
  if (!g_join.load(std::memory_order_relaxed) || tiles > kJoinTiles) return nullptr;
  JoinCounters& j = context_local<JoinCounters>();
  std::lock_guard<std::mutex> lock(j.mutex);
  if (j.counters) return j.counters;
  if (stream_capturing()) return nullptr;
  int* counters = nullptr;
  CAIRN_CUDA_CHECK(cudaMallocAsync(&counters, kJoinTiles * sizeof(int), stream()));
  CAIRN_CUDA_CHECK(cudaMemsetAsync(counters, 0, kJoinTiles * sizeof(int), stream()));
  j.counters = counters;
  return counters;
}

template <class C, class K, typename T, Cover kCover>
void launch_cover(const ThinProblem& p, const Maps& maps, const Part& part, int* counters) {
  static const bool allowed = (allow_smem(wgmma_stream_kernel<C, K, T, kCover>, K::kSmem), true);
  (void)allowed;
  // x tiles inner, as wgmma_gemm's; launched one after another, not overlapped.
  const dim3 grid((p.n + C::kN - 1) / C::kN, (p.m + C::kBM - 1) / C::kBM,
                  kCover == Cover::kJoined ? 2 : 1);
  wgmma_stream_kernel<C, K, T, kCover>
      <<<grid, K::kThreads, K::kSmem, stream()>>>(p, maps, part, counters);
  check_launch("wgmma_stream_kernel");
}

template <int G, int N, int S, int KT, int W, typename T>
void launch(const ThinProblem& p, int cut) {
  using C = wgt::Wg<G, N, S>;
  using K = Streamed<C, KT, W>;
  constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
  const Maps maps{tile_map_128b(p.w, p.m, p.k, C::kBM, kBf16),
                  tile_map_128b(p.x, p.n, p.k, C::kN, kBf16)};
  if (cut >= p.k) return launch_cover<C, K, T, Cover::kWhole>(p, maps, {}, nullptr);
  const int64_t tiles = int64_t{(p.n + C::kN - 1) / C::kN} * ((p.m + C::kBM - 1) / C::kBM);
  if (int* counters = join_counters(tiles)) {
    g_joined_launches.fetch_add(1, std::memory_order_relaxed);
    return launch_cover<C, K, T, Cover::kJoined>(p, maps, {0, cut, false}, counters);
  }
  ThinProblem first = p;
  first.bias = nullptr;  // added once, after the second part
  launch_cover<C, K, T, Cover::kPart>(first, maps, {0, cut, false}, nullptr);
  launch_cover<C, K, T, Cover::kPart>(p, maps, {cut, p.k, true}, nullptr);
}

struct Config {
  const char* name;
  void (*bf16)(const ThinProblem&, int cut);
  void (*f16)(const ThinProblem&, int cut);
};

#define CAIRN_WS(G, N, S, BM, KT, W)                                              \
  Config {                                                                        \
    "ws" #N "x" #BM "s" #S "k" #KT "w" #W, launch<G, N, S, KT, W, __nv_bfloat16>, \
        launch<G, N, S, KT, W, __half>                                            \
  }
// The defaults (ws32x64s8k2w1, ws64x64s6k2w1: wgmma_gemm_pick; with a joined cut k also
// ws32x64s4k2w1 and ws64x64s3k2w1, two blocks an SM) and, for sweeps (MatmulBench.TileSweep)
// and CAIRN_WGMMA=ws<suffix>, the loading warp alone (k1w1), 4 k-tiles a stage, 2 groups left
// running, and the two-blocks-an-SM and wide tiles streamed: none of those gained in the model
// on an H100 (docs/performance-gpu-history-3.md, 2026-12-06); nor did 128 rows of x, joined.
const Config kConfigs[] = {CAIRN_WS(1, 32, 8, 64, 2, 1),  CAIRN_WS(1, 64, 6, 64, 2, 1),
                           CAIRN_WS(1, 64, 12, 64, 1, 1), CAIRN_WS(1, 32, 4, 64, 4, 1),
                           CAIRN_WS(1, 64, 3, 64, 4, 1),  CAIRN_WS(1, 64, 12, 64, 1, 2),
                           CAIRN_WS(1, 64, 3, 64, 2, 1),  CAIRN_WS(2, 128, 6, 128, 1, 2),
                           CAIRN_WS(1, 128, 4, 64, 2, 1), CAIRN_WS(1, 32, 4, 64, 2, 1)};
#undef CAIRN_WS
constexpr int kConfigCount = static_cast<int>(sizeof(kConfigs) / sizeof(kConfigs[0]));

}  // namespace

int wgmma_stream_configs() {
  return kConfigCount;
}

const char* wgmma_stream_name(int config) {
  return kConfigs[config].name;
}

void set_gemm_join(bool on) {
  g_join.store(on);
}
bool gemm_join() {
  return g_join.load();
}
int64_t gemm_joined_launches() {
  return g_joined_launches.load();
}

void wgmma_stream(const ThinProblem& p, bool bf16, int config, int cut) {
  if (p.n == 0 || p.m == 0) return;
  (bf16 ? kConfigs[config].bf16 : kConfigs[config].f16)(p, cut);
}

}  // namespace cairn::cuda
