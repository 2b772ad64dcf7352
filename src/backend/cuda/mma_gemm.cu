// mma_gemm (mma_gemm.h): one kernel template over several tile shapes. A thread block computes
// a kBM × kBN tile of y (kBM rows of x, kBN rows of w); its warps split the tile into kWM × kWN
// warp tiles of m16n8 steps. k advances in tiles of 64, copied global → shared kStages - 1
// tiles ahead (cp.async), read by ldmatrix, multiplied by mma.sync m16n8k16 into f32
// accumulators that start at zero. Every shape walks k the same way, so every shape gives
// every element the same bits (mma_gemm.h). A cut k (gemm_order.h; off by default) runs
// mma_gemm_cut_kernel, two accumulator sets whose k-tiles take turns. Up to 16 rows (32 for narrow
// w) the thin kernels (mma_thin.cu) serve; on Hopper, up to 128 the wgmma tiles (wgmma_gemm.cu),
// whose k16 steps give the bits of mma.sync's.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/gemm_order.h"
#include "backend/cuda/mma_gemm.h"
#include "backend/cuda/mma_thin.h"
#include "backend/cuda/mma_tile.cuh"
#include "backend/cuda/op_errors.h"
#include "backend/cuda/wgmma_gemm.h"
#include "backend/cuda/wgmma_stream.h"

namespace cairn::cuda {
namespace {

using namespace mma;

template <int BM, int BN, int WM, int WN, int Stages, int BK = 64>
struct Tile {
  static constexpr int kBM = BM, kBN = BN, kWN = WN, kStages = Stages;
  static constexpr int kTileK = BK, kRowBytes = BK * 2, kChunksPerRow = BK / 8;
  static constexpr int kThreads = WM * WN * 32;
  static constexpr int kMT = BM / WM / 16;  // m16 steps per warp tile
  static constexpr int kNT = BN / WN / 8;   // n8 steps per warp tile
  static constexpr int kStageBytes = (BM + BN) * kRowBytes;
  static constexpr int kSmemBytes = kStageBytes * Stages;
  static_assert(BM % (WM * 16) == 0 && BN % (WN * 8) == 0 && BK % 64 == 0);
  static_assert(kNT == 1 || kNT % 2 == 0, "B fragments load in pairs of n8 steps");
};

// Up to 32 rows of x (decode) run on mma_thin.cu's kernels.
using Small = Tile<64, 32, 2, 2, 6>;    // batched decode
using Medium = Tile<128, 32, 4, 1, 4>;  // batches past 64 rows
using Large = Tile<128, 128, 2, 4, 3>;  // prefill
// Squarer tiles for 17-128 rows: fewer re-reads of x and w from L2 than the thin ones.
using Tile32x64 = Tile<32, 64, 2, 2, 6>;
using Tile64x64 = Tile<64, 64, 2, 2, 6>;
using Tile64x128 = Tile<64, 128, 2, 4, 4>;
using Tile128x64 = Tile<128, 64, 4, 2, 4>;

struct Problem {
  const void* x;
  const void* w;
  const float* bias;
  float* y;
  int n, m, k;
  int cut;  // of k (gemm_order.h)
};

struct Origin {
  int row0, col0;  // first x row and first w row of the block's tile
};

// Block b's tile. Blocks run in groups of 8 x-row tiles, w-row tiles outer, so blocks running
// together share x tiles and w tiles in L2.
__device__ inline Origin tile_of(int b, int tiles_r, int tiles_c, int bm, int bn) {
  constexpr int kGroup = 8;
  const int per_group = kGroup * tiles_c;
  const int first = b / per_group * kGroup;
  const int size = min(tiles_r - first, kGroup);
  const int in = b % per_group;
  return {(first + in % size) * bm, in / size * bn};
}

template <class C, typename T>
__device__ inline void load_stage(uint8_t* stage, const Problem& p, Origin o, int kt) {
  const uint32_t base = shared_address(stage);
  copy_rows<C, C::kBM>(base, static_cast<const T*>(p.x), o.row0, p.n, p.k, kt);
  copy_rows<C, C::kBN>(base + C::kBM * C::kRowBytes, static_cast<const T*>(p.w), o.col0, p.m, p.k,
                       kt);
}

// Step s's fragments of the warp: kMT of x (A), kNT of w (B).
template <class C>
__device__ inline void load_step(uint32_t a_base, uint32_t b_base, int s, int wm, int wn, int lane,
                                 uint32_t (&a)[C::kMT][4], uint32_t (&b)[C::kNT][2]) {
#pragma unroll
  for (int mt = 0; mt < C::kMT; ++mt) {
    const int r = (wm * C::kMT + mt) * 16 + lane % 16;
    ldmatrix_x4(a_base + swizzled<C::kRowBytes>(r, s * 2 + lane / 16), a[mt][0], a[mt][1], a[mt][2],
                a[mt][3]);
  }
  if constexpr (C::kNT == 1) {
    const int r = wn * 8 + lane % 8;
    ldmatrix_x2(b_base + swizzled<C::kRowBytes>(r, s * 2 + (lane / 8) % 2), b[0][0], b[0][1]);
  } else {
#pragma unroll
    for (int nt = 0; nt < C::kNT; nt += 2) {
      const int r = (wn * C::kNT + nt) * 8 + (lane / 16) * 8 + lane % 8;
      ldmatrix_x4(b_base + swizzled<C::kRowBytes>(r, s * 2 + (lane / 8) % 2), b[nt][0], b[nt][1],
                  b[nt + 1][0], b[nt + 1][1]);
    }
  }
}

// The warp's k16 steps over one k-tile (the first `steps`; all of them when Full), in
// increasing k. Step s + 1's fragments are loaded before step s's mma and a full tile has no
// branch, so the chains wait on their mma, not on shared memory.
template <class C, typename T, bool Full>
__device__ inline void mma_stage(const uint8_t* stage, int steps, int wm, int wn, int lane,
                                 float (&acc)[C::kMT][C::kNT][4]) {
  constexpr int kSteps = C::kTileK / 16;
  const uint32_t a_base = shared_address(stage), b_base = a_base + C::kBM * C::kRowBytes;
  uint32_t a[2][C::kMT][4], b[2][C::kNT][2];
  load_step<C>(a_base, b_base, 0, wm, wn, lane, a[0], b[0]);
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    if (s + 1 < kSteps && (Full || s + 1 < steps))
      load_step<C>(a_base, b_base, s + 1, wm, wn, lane, a[(s + 1) % 2], b[(s + 1) % 2]);
    if (!Full && s >= steps) continue;
#pragma unroll
    for (int mt = 0; mt < C::kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < C::kNT; ++nt) mma_k16<T>(acc[mt][nt], a[s % 2][mt], b[s % 2][nt]);
  }
}

// The warp's steps over the k-tile at position j of the order into its part's accumulators.
template <class C, typename T>
__device__ __forceinline__ void mma_position(const uint8_t* stage, int steps, int part, int wm,
                                             int wn, int lane, float (&first)[C::kMT][C::kNT][4],
                                             float (&second)[C::kMT][C::kNT][4]) {
  // Only the last k-tile is short: the second part's, or the one part's when k < 512.
  const bool full = steps >= C::kTileK / 16;
  if (part == 0) {
    if (full)
      mma_stage<C, T, true>(stage, steps, wm, wn, lane, first);
    else
      mma_stage<C, T, false>(stage, steps, wm, wn, lane, first);
  } else if (full) {
    mma_stage<C, T, true>(stage, steps, wm, wn, lane, second);
  } else {
    mma_stage<C, T, false>(stage, steps, wm, wn, lane, second);
  }
}

// Accumulator (mt, nt) of lane l holds rows g and g + 8 (g = l / 4), columns 2(l % 4) and
// 2(l % 4) + 1 of its m16n8 step. y = acc + bias, or for a cut k (Cut) (acc + second) + bias.
template <class C, bool Cut = false>
__device__ inline void store_tile(const Problem& p, Origin o, int wm, int wn, int lane,
                                  const float (&acc)[C::kMT][C::kNT][4],
                                  const float (&second)[C::kMT][C::kNT][4]) {
#pragma unroll
  for (int mt = 0; mt < C::kMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < C::kNT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = o.row0 + (wm * C::kMT + mt) * 16 + lane / 4 + (e / 2) * 8;
        const int col = o.col0 + (wn * C::kNT + nt) * 8 + (lane % 4) * 2 + e % 2;
        if (row >= p.n || col >= p.m) continue;
        const float v = Cut ? acc[mt][nt][e] + second[mt][nt][e] : acc[mt][nt][e];
        p.y[static_cast<int64_t>(row) * p.m + col] = p.bias ? v + p.bias[col] : v;
      }
}

template <class C, typename T>
__global__ void __launch_bounds__(C::kThreads) mma_gemm_kernel(Problem p) {
  extern __shared__ __align__(128) uint8_t smem[];
  const int tiles_r = (p.n + C::kBM - 1) / C::kBM, tiles_c = (p.m + C::kBN - 1) / C::kBN;
  const Origin o = tile_of(static_cast<int>(blockIdx.x), tiles_r, tiles_c, C::kBM, C::kBN);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int wm = warp / C::kWN, wn = warp % C::kWN;
  float acc[C::kMT][C::kNT][4] = {};
  const int tiles_k = (p.k + C::kTileK - 1) / C::kTileK;
  for (int s = 0; s < C::kStages - 1; ++s) {
    if (s < tiles_k) load_stage<C, T>(smem + s * C::kStageBytes, p, o, s);
    commit();
  }
  for (int kt = 0; kt < tiles_k; ++kt) {
    wait_pending<C::kStages - 2>();
    __syncthreads();  // tile kt is in; every warp is done with the slot refilled below
    const int next = kt + C::kStages - 1;
    if (next < tiles_k) load_stage<C, T>(smem + next % C::kStages * C::kStageBytes, p, o, next);
    commit();
    const uint8_t* stage = smem + kt % C::kStages * C::kStageBytes;
    const int steps = (p.k - kt * C::kTileK) / 16;
    if (steps >= C::kTileK / 16)
      mma_stage<C, T, true>(stage, steps, wm, wn, lane, acc);
    else
      mma_stage<C, T, false>(stage, steps, wm, wn, lane, acc);
  }
  store_tile<C>(p, o, wm, wn, lane, acc, acc);
}

// A cut k (gemm_order.h): the k-tiles in TileOrder, each part into its own accumulators, so
// consecutive k-tiles' chains are independent; y = (first + second) + bias.
template <class C, typename T>
__global__ void __launch_bounds__(C::kThreads) mma_gemm_cut_kernel(Problem p) {
  extern __shared__ __align__(128) uint8_t smem[];
  const int tiles_r = (p.n + C::kBM - 1) / C::kBM, tiles_c = (p.m + C::kBN - 1) / C::kBN;
  const Origin o = tile_of(static_cast<int>(blockIdx.x), tiles_r, tiles_c, C::kBM, C::kBN);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int wm = warp / C::kWN, wn = warp % C::kWN;
  float first[C::kMT][C::kNT][4] = {}, second[C::kMT][C::kNT][4] = {};
  const TileOrder order = TileOrder::of(p.k, p.cut, C::kTileK);
  for (int s = 0; s < C::kStages - 1; ++s) {
    if (s < order.end) load_stage<C, T>(smem + s * C::kStageBytes, p, o, order.tile(s));
    commit();
  }
  for (int j = 0; j < order.end; ++j) {
    wait_pending<C::kStages - 2>();
    __syncthreads();  // position j is in; every warp is done with the slot refilled below
    const int next = j + C::kStages - 1;
    if (next < order.end)
      load_stage<C, T>(smem + next % C::kStages * C::kStageBytes, p, o, order.tile(next));
    commit();
    const int steps = (p.k - order.tile(j) * C::kTileK) / 16;
    mma_position<C, T>(smem + j % C::kStages * C::kStageBytes, steps, order.part(j), wm, wn, lane,
                       first, second);
  }
  store_tile<C, true>(p, o, wm, wn, lane, first, second);
}

template <class C, typename T>
void launch(const Problem& p) {
  const int64_t blocks = int64_t{(p.n + C::kBM - 1) / C::kBM} * ((p.m + C::kBN - 1) / C::kBN);
  if (p.cut < p.k) {
    static const bool allowed = (allow_smem(mma_gemm_cut_kernel<C, T>, C::kSmemBytes), true);
    (void)allowed;
    mma_gemm_cut_kernel<C, T>
        <<<static_cast<unsigned>(blocks), C::kThreads, C::kSmemBytes, stream()>>>(p);
    return check_launch("mma_gemm_cut_kernel");
  }
  static const bool allowed = (allow_smem(mma_gemm_kernel<C, T>, C::kSmemBytes), true);
  (void)allowed;
  // Launched one after another, not overlapped (launch.h): batch-64 decode on an H200 fell
  // from 6.34k to 5.82k tok/s when these tiles overlapped their neighbours (docs/cuda.md).
  mma_gemm_kernel<C, T><<<static_cast<unsigned>(blocks), C::kThreads, C::kSmemBytes, stream()>>>(p);
  check_launch("mma_gemm_kernel");
}

enum class Shape { kSmall, kMedium, kLarge, k32x64, k64x64, k64x128, k128x64, kCount };
constexpr const char* kShapeNames[] = {"64x32", "128x32", "128x128", "32x64",
                                       "64x64", "64x128", "128x64"};
static_assert(std::size(kShapeNames) == static_cast<size_t>(Shape::kCount));

// Where k is cut by default: on a GPU whose memory streams more than 30 GB/s a multiprocessor
// at its peak (an H200: ~37; an H100 SXM: ~25), a batch-1 product is bound by its outputs'
// chains of tensor-core steps rather than its bytes, and the cut halves them (H200: batch 1
// +7%); elsewhere it gains nothing there and costs the streamed tiles a launch (H100: batch
// 64-128 -3%; docs/performance-gpu-history-3.md, 2026-12-06, afternoon).
constexpr int64_t kDefaultSplitFrom = 8192;  // an 8B model's down product, a 70B's o_proj too
constexpr double kChainBoundGbsPerSm = 30.0;

// CAIRN_GEMM_SPLIT_K_FROM (the depth from which k is cut; 0: never), else the device's rule.
int64_t default_split_from() {
  if (const char* v = std::getenv("CAIRN_GEMM_SPLIT_K_FROM"))
    return std::max<int64_t>(0, std::atoll(v));
  int dev = 0, clock_khz = 0, bus_bits = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  const double peak_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;  // double data rate
  return peak_gbs / sm_count() > kChainBoundGbsPerSm ? kDefaultSplitFrom : 0;
}

// The depth from which k is cut (gemm_cut); -1 until the first product asks.
std::atomic<int64_t> g_split_from{-1};

// force_mma_tile: a Shape, kThin + c for thin config c, first_wg() + c for wgmma config c, or -1
// (by n and m)
std::atomic<int> g_forced{-1};
constexpr int kThin = static_cast<int>(Shape::kCount);
int first_wg() {
  return kThin + mma_thin_configs();
}

// CAIRN_THIN_MAX_ROWS (16-32, default 16; read once): the most rows of x a narrow product
// gives the thin kernels where the wgmma tiles run; past it the streamed 32-row tile takes it
// (H100, 8B: batch 24 2,923-2,941 → 3,141-3,156 tok/s, 32 3,587-3,621 → 3,853-3,895; 32
// puts them back).
int64_t thin_max_rows() {
  static const int64_t rows = [] {
    const char* v = std::getenv("CAIRN_THIN_MAX_ROWS");
    return v ? std::clamp<int64_t>(std::atoll(v), 16, 32) : int64_t{16};
  }();
  return rows;
}

// Whether n rows of x and m rows of w take the thin kernels: every product of up to 16 rows,
// and unless w is wide of up to thin_max_rows() where the wgmma tiles run, else 32.
bool thin(int64_t n, int64_t m) {
  return n <= 16 || (n <= (wgmma_gemm_on() ? thin_max_rows() : 32) && m < kWideRows);
}

// Past the thin kernels (and, up to 128 rows, where the wgmma tiles do not run), from
// MatmulBench.TileSweep on an H200 (docs/performance-gpu-history.md):
// wide products (gate|up) want squarer tiles that read x and w fewer times from L2, the rest the
// many blocks of 64x32 up to 128 rows; past 128 rows the large tile once it fills the GPU
// twice over.
Shape shape_for(int64_t n, int64_t m) {
  if (n <= 128) {
    if (m >= kWideRows) return n <= 64 ? Shape::k64x128 : Shape::kLarge;
    return Shape::kSmall;
  }
  const int64_t large_blocks = ((n + 127) / 128) * ((m + 127) / 128);
  return large_blocks >= 2 * static_cast<int64_t>(sm_count()) ? Shape::kLarge : Shape::kMedium;
}

std::vector<std::string> tile_names() {
  std::vector<std::string> names(std::begin(kShapeNames), std::end(kShapeNames));
  for (int c = 0; c < mma_thin_configs(); ++c) names.emplace_back(mma_thin_name(c));
  if (wgmma_gemm_available())
    for (int c = 0; c < wgmma_gemm_configs(); ++c) names.emplace_back(wgmma_gemm_name(c));
  return names;
}

// CAIRN_MMA_TILE: a tile every product the thin kernels would serve takes instead (for
// benchmarks: every tile gives the same bits); -1: none.
int env_tile() {
  static const int tile = [] {
    const char* v = std::getenv("CAIRN_MMA_TILE");
    const std::vector<std::string> names = tile_names();
    const auto at = v ? std::find(names.begin(), names.end(), v) : names.end();
    return at == names.end() ? -1 : static_cast<int>(at - names.begin());
  }();
  return tile;
}

// joined: k is cut and the streamed tiles run its parts at once (wgmma_stream.h).
int tile_for(int64_t n, int64_t m, bool joined) {
  if (const int forced = g_forced.load(std::memory_order_relaxed); forced >= 0) return forced;
  if (!thin(n, m)) {
    if (n <= 128 && wgmma_gemm_on()) return first_wg() + wgmma_gemm_pick(n, m, joined);
    return static_cast<int>(shape_for(n, m));
  }
  return env_tile() >= 0 ? env_tile() : kThin + mma_thin_pick(n, m);
}

template <typename T>
void launch_typed(const Problem& p) {
  const int tile = tile_for(p.n, p.m, p.cut < p.k && gemm_join());
  const ThinProblem t{p.x, p.w, p.bias, p.y, p.n, p.m, p.k};
  constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
  if (tile >= first_wg()) return wgmma_gemm(t, p.cut, kBf16, tile - first_wg());
  if (tile >= kThin) return mma_thin(t, p.cut, kBf16, tile - kThin);
  switch (static_cast<Shape>(tile)) {
    case Shape::kSmall:
      return launch<Small, T>(p);
    case Shape::kMedium:
      return launch<Medium, T>(p);
    case Shape::kLarge:
      return launch<Large, T>(p);
    case Shape::k32x64:
      return launch<Tile32x64, T>(p);
    case Shape::k64x64:
      return launch<Tile64x64, T>(p);
    case Shape::k64x128:
      return launch<Tile64x128, T>(p);
    case Shape::k128x64:
      return launch<Tile128x64, T>(p);
    case Shape::kCount:
      break;
  }
}

}  // namespace

int64_t gemm_split_from() {
  const int64_t v = g_split_from.load(std::memory_order_relaxed);
  if (v >= 0) return v;
  int64_t undecided = -1;  // decided once, by the first caller
  g_split_from.compare_exchange_strong(undecided, default_split_from());
  return g_split_from.load();
}

void set_gemm_split_from(int64_t depth) {
  g_split_from.store(std::max<int64_t>(0, depth));
}

int64_t gemm_cut(int64_t m, int64_t k) {
  return cut_of(m, k, gemm_split_from());
}

bool mma_gemm_supports(const Tensor& w) {
  const DType t = w.dtype();
  return (t == DType::kBF16 || t == DType::kF16) && w.ndim() == 2 && w.dim(1) > 0 &&
         w.dim(1) % 16 == 0 && reinterpret_cast<uintptr_t>(w.raw()) % 16 == 0 &&
         w.dim(0) < (int64_t{1} << 31) && w.dim(1) < (int64_t{1} << 31);
}

void mma_gemm(const void* x, const Tensor& w, const float* bias, Tensor& y) {
  const Problem p{x,
                  w.raw(),
                  bias,
                  y.data<float>(),
                  static_cast<int>(y.dim(0)),
                  static_cast<int>(w.dim(0)),
                  static_cast<int>(w.dim(1)),
                  static_cast<int>(gemm_cut(w.dim(0), w.dim(1)))};
  if (p.n == 0 || p.m == 0) return;
  if (w.dtype() == DType::kBF16)
    launch_typed<__nv_bfloat16>(p);
  else
    launch_typed<__half>(p);
}

const char* mma_gemm_tile_name(int64_t n, int64_t m, int64_t k) {
  const int tile = tile_for(n, m, k > 0 && gemm_cut(m, k) < k && gemm_join());
  if (tile >= first_wg()) return wgmma_gemm_name(tile - first_wg());
  return tile >= kThin ? mma_thin_name(tile - kThin) : kShapeNames[tile];
}

std::vector<std::string> mma_gemm_tile_names() {
  return tile_names();
}

void force_mma_tile(const std::string& name) {
  const std::vector<std::string> names = mma_gemm_tile_names();
  const auto at = std::find(names.begin(), names.end(), name);
  if (!name.empty() && at == names.end())
    invalid_argument("force_mma_tile", "no tile '" + name + "'");
  g_forced.store(name.empty() ? -1 : static_cast<int>(at - names.begin()));
}

}  // namespace cairn::cuda
