// mma_thin (mma_thin.h): the fixed-order GEMM's kernels for few rows of x. A block computes
// y[r0 : r0 + XR, col0 : col0 + kBN] (XR = rows of x staged, kBN = WN warps × NT n8 tiles);
// k advances in tiles of BK through S shared-memory stages, S − 1 tiles ahead.
//
// Against mma_gemm.cu's general tiles, per k16 step of a warp: one ldmatrix of x shared by the
// NT chains, NT/2 ldmatrix.x4 of w, NT mma; the swizzled addresses come from per-lane offsets
// computed once; each thread's copies walk fixed (row, chunk) slots, so a stage costs a pointer
// add per copy. Rows of x past XR are never staged: the A fragment's rows 8-15 (and rows past
// XR) read row (r mod XR), whose outputs are never stored (an mma output (i, j) reads only row
// i of A and column j of B).
//
// A cut k (gemm_order.h; off by default) runs thin_cut_kernel: the same k-tiles and steps, a
// set of warps a part.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdlib>
#include <cstring>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/gemm_order.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/mma_thin.h"
#include "backend/cuda/mma_tile.cuh"
#include "backend/cuda/pdl.cuh"

namespace cairn::cuda {
namespace {

using namespace mma;

template <int XR, int NT, int WN, int BK, int S>
struct Thin {
  static constexpr int kThreads = WN * 32;
  static constexpr int kBN = WN * NT * 8;  // rows of w a block
  static constexpr int kRowBytes = BK * 2, kChunks = BK / 8;
  static constexpr int kStep = kThreads / kChunks;  // rows apart of a thread's copies
  static constexpr int kStageBytes = (XR + kBN) * kRowBytes;
  static constexpr int kSmem = kStageBytes * S;
  static_assert(kThreads % kChunks == 0 && kBN % kStep == 0 && (NT == 1 || NT % 2 == 0));
};

// One k-tile's copies of this thread: chunk `c` of rows r0, r0 + kStep, … of x (those < XR and
// < x_rows: copy_x) and of w (those < w_rows: copy_w); x_at / w_at point at the thread's first
// row, chunk c, of k-tile 0.
template <class C, int XR, typename T>
__device__ __forceinline__ void copy_x(uint32_t stage, const T* x_at, int64_t k, int kt, int c,
                                       int r0, int x_rows) {
  if (kt * (C::kChunks * 8) + c * 8 >= k) return;
  const int64_t off = static_cast<int64_t>(kt) * C::kChunks * 8, stride = C::kStep * k;
#pragma unroll
  for (int j = 0; j < (XR + C::kStep - 1) / C::kStep; ++j) {
    const int r = r0 + j * C::kStep;
    if (r < XR && r < x_rows) copy16(stage + swizzled<C::kRowBytes>(r, c), x_at + j * stride + off);
  }
}

template <class C, int XR, typename T>
__device__ __forceinline__ void copy_w(uint32_t stage, const T* w_at, int64_t k, int kt, int c,
                                       int r0, int w_rows) {
  if (kt * (C::kChunks * 8) + c * 8 >= k) return;
  const int64_t off = static_cast<int64_t>(kt) * C::kChunks * 8, stride = C::kStep * k;
  const uint32_t w_stage = stage + XR * C::kRowBytes;
#pragma unroll
  for (int j = 0; j < C::kBN / C::kStep; ++j) {
    const int r = r0 + j * C::kStep;
    if (r < w_rows) copy16(w_stage + swizzled<C::kRowBytes>(r, c), w_at + j * stride + off);
  }
}

// Per-lane byte offsets of the fragments inside a stage: row bases, and the swizzled chunk
// offset of k16 step s (s % 4 picks one of four; s / 4 adds 128 bytes: the XOR only touches
// a chunk index's low three bits).
template <class C, int XR, int NT>
struct Frag {
  uint32_t a_row, b_row, a_off[4], b_off[4];
  __device__ __forceinline__ explicit Frag(int warp, int lane) {
    const int ra = (lane % 16) % XR;
    const int rb = warp * NT * 8 + (NT == 1 ? 0 : (lane / 16) * 8) + lane % 8;
    a_row = ra * C::kRowBytes;
    b_row = (XR + rb) * C::kRowBytes;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      a_off[q] = ((2 * q + lane / 16) ^ (ra & 7)) * 16;
      b_off[q] = ((2 * q + (lane / 8) % 2) ^ (rb & 7)) * 16;
    }
  }
};

// Step s's fragments: x (A, shared by the NT chains) and w (B, one pair per n8 tile).
template <class C, int XR, int NT>
__device__ __forceinline__ void load_step(uint32_t stage, const Frag<C, XR, NT>& f, int s,
                                          uint32_t (&a)[4], uint32_t (&b)[NT][2]) {
  const uint32_t step = (s / 4) * 128;
  ldmatrix_x4(stage + f.a_row + step + f.a_off[s % 4], a[0], a[1], a[2], a[3]);
  if constexpr (NT == 1) {
    ldmatrix_x2(stage + f.b_row + step + f.b_off[s % 4], b[0][0], b[0][1]);
  } else {
#pragma unroll
    for (int nt = 0; nt < NT; nt += 2)
      ldmatrix_x4(stage + f.b_row + nt * 8 * C::kRowBytes + step + f.b_off[s % 4], b[nt][0],
                  b[nt][1], b[nt + 1][0], b[nt + 1][1]);
  }
}

// The warp's k16 steps over one staged k-tile, those below k only (`steps` of them; all when
// Full), in increasing k. Step s + 1's fragments are loaded before step s's mma, and a full
// tile has no branch, so the chain waits on the mma before it, not on shared memory.
template <class C, int XR, int NT, typename T, bool Full>
__device__ __forceinline__ void mma_tile(uint32_t stage, const Frag<C, XR, NT>& f, int steps,
                                         float (&acc)[NT][4]) {
  constexpr int kSteps = C::kChunks / 2;
  uint32_t a[2][4], b[2][NT][2];
  load_step<C, XR, NT>(stage, f, 0, a[0], b[0]);
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    if (s + 1 < kSteps && (Full || s + 1 < steps))
      load_step<C, XR, NT>(stage, f, s + 1, a[(s + 1) % 2], b[(s + 1) % 2]);
    if (!Full && s >= steps) continue;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) mma_k16<T>(acc[nt], a[s % 2], b[s % 2][nt]);
  }
}

template <int XR, int NT, int WN, int BK, int S, typename T>
__global__ void __launch_bounds__(WN * 32) thin_kernel(ThinProblem p) {
  using C = Thin<XR, NT, WN, BK, S>;
  extern __shared__ __align__(128) uint8_t smem[];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int col0 = static_cast<int>(blockIdx.x) * C::kBN, row0 = static_cast<int>(blockIdx.y) * XR;
  const int c = static_cast<int>(threadIdx.x) % C::kChunks;
  const int r0 = static_cast<int>(threadIdx.x) / C::kChunks;
  const int64_t k = p.k;
  const T* x_at = static_cast<const T*>(p.x) + (row0 + r0) * k + c * 8;
  const T* w_at = static_cast<const T*>(p.w) + (col0 + r0) * k + c * 8;
  const int x_rows = p.n - row0, w_rows = p.m - col0;
  const uint32_t base = shared_address(smem);
  const int tiles_k = (p.k + BK - 1) / BK;
  // The weights of the first S − 1 tiles are fetched before the kernel ahead has finished
  // (pdl.cuh); they join the first commit group, so tile kt is in once groups 0..kt are.
#pragma unroll
  for (int s = 0; s < S - 1; ++s)
    if (s < tiles_k) copy_w<C, XR>(base + s * C::kStageBytes, w_at, k, s, c, r0, w_rows);
  pdl_enter();
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < tiles_k) copy_x<C, XR>(base + s * C::kStageBytes, x_at, k, s, c, r0, x_rows);
    commit();
  }
  const Frag<C, XR, NT> f(warp, lane);
  float acc[NT][4] = {};
  for (int kt = 0; kt < tiles_k; ++kt) {
    wait_pending<S - 2>();
    __syncthreads();  // tile kt is in; every warp is done with the stage refilled below
    const int next = kt + S - 1;
    if (next < tiles_k) {
      copy_x<C, XR>(base + next % S * C::kStageBytes, x_at, k, next, c, r0, x_rows);
      copy_w<C, XR>(base + next % S * C::kStageBytes, w_at, k, next, c, r0, w_rows);
    }
    commit();
    const uint32_t stage = base + kt % S * C::kStageBytes;
    const int steps = (p.k - kt * BK) / 16;
    if (steps >= C::kChunks / 2)
      mma_tile<C, XR, NT, T, true>(stage, f, steps, acc);
    else
      mma_tile<C, XR, NT, T, false>(stage, f, steps, acc);
  }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = row0 + lane / 4 + (e / 2) * 8;
      const int col = col0 + (warp * NT + nt) * 8 + (lane % 4) * 2 + e % 2;
      if (row >= p.n || row >= row0 + XR || col >= p.m) continue;
      const float v = acc[nt][e];
      p.y[static_cast<int64_t>(row) * p.m + col] = p.bias ? v + p.bias[col] : v;
    }
}

// A cut k (gemm_order.h): two warp sets of WN warps, set 0 the first part, set 1 the second,
// each through its own stages (S where two sets' fit kMaxSmem, else as many as do) on its own
// named barrier, so an output's two chains run side by side.
constexpr int kMaxSmem = 232448;  // an H100/H200 SM's 227 KiB

template <int XR, int NT, int WN, int BK, int S>
struct ThinCut : Thin<XR, NT, WN, BK, S> {
  using One = Thin<XR, NT, WN, BK, S>;
  static constexpr int kSetThreads = One::kThreads, kThreads = 2 * kSetThreads;
  static constexpr int kBK = BK;
  static constexpr int kStages =
      2 * S * One::kStageBytes <= kMaxSmem ? S : kMaxSmem / (2 * One::kStageBytes);
  static constexpr int kSetBytes = One::kStageBytes * kStages, kSmem = 2 * kSetBytes;
  static_assert(kStages >= 2 && WN * NT * 4 * 32 * 4 <= kSetBytes);
};

__device__ __forceinline__ void bar_sync(int id, int threads) {  // id 1, 2: a set's barrier
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// One set's part: k-tiles first .. first + count − 1 through its stages at `base` into acc,
// pipelined as thin_kernel's k-tiles are; x_at / w_at: the thread's pointers at k-tile 0.
template <class C, int XR, int NT, typename T>
__device__ __forceinline__ void run_part(const ThinProblem& p, const T* x_at, const T* w_at, int c,
                                         int r0, uint32_t base, int first, int count, int bar,
                                         const Frag<C, XR, NT>& f, float (&acc)[NT][4]) {
  constexpr int S = C::kStages;
  const int64_t k = p.k;
  const int x_rows = p.n - static_cast<int>(blockIdx.y) * XR;
  const int w_rows = p.m - static_cast<int>(blockIdx.x) * C::kBN;
#pragma unroll
  for (int s = 0; s < S - 1; ++s)
    if (s < count) copy_w<C, XR>(base + s * C::kStageBytes, w_at, k, first + s, c, r0, w_rows);
  pdl_enter();
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < count) copy_x<C, XR>(base + s * C::kStageBytes, x_at, k, first + s, c, r0, x_rows);
    commit();
  }
  for (int i = 0; i < count; ++i) {
    wait_pending<S - 2>();
    bar_sync(bar, C::kSetThreads);  // tile i is in; the set is done with the stage refilled
    if (const int next = i + S - 1; next < count) {
      const uint32_t stage = base + next % S * C::kStageBytes;
      copy_x<C, XR>(stage, x_at, k, first + next, c, r0, x_rows);
      copy_w<C, XR>(stage, w_at, k, first + next, c, r0, w_rows);
    }
    commit();
    const uint32_t stage = base + i % S * C::kStageBytes;
    const int steps = (p.k - (first + i) * C::kBK) / 16;
    if (steps >= C::kChunks / 2)
      mma_tile<C, XR, NT, T, true>(stage, f, steps, acc);
    else
      mma_tile<C, XR, NT, T, false>(stage, f, steps, acc);
  }
}

// y = (first + second) + bias: set 1 leaves its sums in its own stages once all its warps are
// done with them; set 0 adds them and stores.
template <class C, int XR, int NT>
__device__ __forceinline__ void finish_cut(const ThinProblem& p, uint8_t* smem, int set, int warp,
                                           int lane, float (&acc)[NT][4]) {
  float* sums = reinterpret_cast<float*>(smem + C::kSetBytes);
  const auto at = [&](int nt, int e) { return ((warp * NT + nt) * 4 + e) * 32 + lane; };
  if (set == 1) {
    bar_sync(2, C::kSetThreads);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) sums[at(nt, e)] = acc[nt][e];
  }
  __syncthreads();
  if (set == 1) return;
  const int col0 = static_cast<int>(blockIdx.x) * C::kBN, row0 = static_cast<int>(blockIdx.y) * XR;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = row0 + lane / 4 + (e / 2) * 8;
      const int col = col0 + (warp * NT + nt) * 8 + (lane % 4) * 2 + e % 2;
      if (row >= p.n || row >= row0 + XR || col >= p.m) continue;
      const float v = acc[nt][e] + sums[at(nt, e)];
      p.y[static_cast<int64_t>(row) * p.m + col] = p.bias ? v + p.bias[col] : v;
    }
}

template <int XR, int NT, int WN, int BK, int S, typename T>
__global__ void __launch_bounds__(2 * WN * 32) thin_cut_kernel(ThinProblem p, int cut) {
  using C = ThinCut<XR, NT, WN, BK, S>;
  extern __shared__ __align__(128) uint8_t smem[];
  const int set = static_cast<int>(threadIdx.x) / C::kSetThreads;
  const int t = static_cast<int>(threadIdx.x) % C::kSetThreads, warp = t / 32, lane = t % 32;
  const int col0 = static_cast<int>(blockIdx.x) * C::kBN, row0 = static_cast<int>(blockIdx.y) * XR;
  const int c = t % C::kChunks, r0 = t / C::kChunks;
  const T* x_at = static_cast<const T*>(p.x) + (row0 + r0) * int64_t{p.k} + c * 8;
  const T* w_at = static_cast<const T*>(p.w) + (col0 + r0) * int64_t{p.k} + c * 8;
  const TileOrder order = TileOrder::of(p.k, cut, BK);
  const int first = set == 0 ? 0 : order.mid;
  const int count = set == 0 ? order.mid : order.end - order.mid;
  const Frag<C, XR, NT> f(warp, lane);
  float acc[NT][4] = {};
  run_part<C, XR, NT, T>(p, x_at, w_at, c, r0, shared_address(smem) + set * C::kSetBytes, first,
                         count, 1 + set, f, acc);
  finish_cut<C, XR, NT>(p, smem, set, warp, lane, acc);
}

template <int XR, int NT, int WN, int BK, int S, typename T>
void launch_cut(const ThinProblem& p, int cut) {
  using C = ThinCut<XR, NT, WN, BK, S>;
  auto* kernel = thin_cut_kernel<XR, NT, WN, BK, S, T>;
  static const bool allowed = (allow_smem(kernel, C::kSmem), true);
  (void)allowed;
  const dim3 grid((p.m + C::kBN - 1) / C::kBN, (p.n + XR - 1) / XR);
  launch_kernel("thin_cut_kernel", kernel, grid, C::kThreads, C::kSmem, p, cut);
}

template <int XR, int NT, int WN, int BK, int S, typename T>
void launch(const ThinProblem& p, int cut) {
  if (cut < p.k) return launch_cut<XR, NT, WN, BK, S, T>(p, cut);
  using C = Thin<XR, NT, WN, BK, S>;
  auto* kernel = thin_kernel<XR, NT, WN, BK, S, T>;
  static const bool allowed = (allow_smem(kernel, C::kSmem), true);
  (void)allowed;
  const dim3 grid((p.m + C::kBN - 1) / C::kBN, (p.n + XR - 1) / XR);
  launch_kernel("thin_kernel", kernel, grid, C::kThreads, C::kSmem, p);
}

// XR: the rows of x a block stages, n rounded up to a power of two (16 past 8).
template <int NT, int WN, int BK, int S, typename T>
void launch_rows(const ThinProblem& p, int cut) {
  if (p.n == 1) return launch<1, NT, WN, BK, S, T>(p, cut);
  if (p.n == 2) return launch<2, NT, WN, BK, S, T>(p, cut);
  if (p.n <= 4) return launch<4, NT, WN, BK, S, T>(p, cut);
  if (p.n <= 8) return launch<8, NT, WN, BK, S, T>(p, cut);
  launch<16, NT, WN, BK, S, T>(p, cut);
}

struct Config {
  const char* name;
  void (*bf16)(const ThinProblem&, int);
  void (*f16)(const ThinProblem&, int);
};

#define CAIRN_THIN(NT, WN, BK, S)                                                    \
  Config {                                                                           \
    "thin:nt" #NT "w" #WN "k" #BK "s" #S, launch_rows<NT, WN, BK, S, __nv_bfloat16>, \
        launch_rows<NT, WN, BK, S, __half>                                           \
  }
// From MatmulBench.ThinSweep on an H200 (docs/performance.md): a Llama-8B layer's products at
// 1-16 rows (and 32), µs against 7 other configs of NT, WN, BK and S.
const Config kConfigs[] = {
    CAIRN_THIN(1, 4, 256, 2),  // 17-32 rows; wide w past 8 rows
    CAIRN_THIN(1, 4, 256, 4),  // up to 16 rows
    CAIRN_THIN(2, 4, 256, 3),  // wide w, up to 8 rows
    // Not picked yet, for ThinSweep: at one row, o and down run ~45% above the copy
    // bandwidth's floor at 4 stages (3 tiles in flight; down 47.6 µs against 58.4 at 2 stages
    // on an H100); more tiles in flight may close more of it (docs/performance.md).
    CAIRN_THIN(1, 4, 256, 8),
    // More tiles in flight for the narrow products at 1-16 rows, where the H200 needs ~33 GB/s an
    // SM (a block an SM for o and down) and 3 tiles of 17 KiB left down at 67% of the copy
    // bandwidth; 6 stages (101 KiB) still let a neighbour's block in beside it for overlap.
    CAIRN_THIN(1, 4, 256, 6),
};
#undef CAIRN_THIN
constexpr int kConfigCount = static_cast<int>(sizeof(kConfigs) / sizeof(kConfigs[0]));

}  // namespace

int mma_thin_configs() {
  return kConfigCount;
}

const char* mma_thin_name(int config) {
  return kConfigs[config].name;
}

// CAIRN_THIN_NARROW (a thin config's name; read once): the config narrow products (w not wide)
// of 1-16 rows take instead of thin:nt1w4k256s4, for timing one against another in the model.
int narrow_config() {
  static const int config = [] {
    const char* v = std::getenv("CAIRN_THIN_NARROW");
    for (int c = 0; v && c < kConfigCount; ++c)
      if (std::strcmp(v, kConfigs[c].name) == 0) return c;
    return 1;
  }();
  return config;
}

int mma_thin_pick(int64_t n, int64_t m) {
  if (m >= kWideRows) return n <= 8 ? 2 : 0;
  return n <= 16 ? narrow_config() : 0;
}

void mma_thin(const ThinProblem& p, int cut, bool bf16, int config) {
  if (p.n == 0 || p.m == 0) return;
  (bf16 ? kConfigs[config].bf16 : kConfigs[config].f16)(p, cut);
}

}  // namespace cairn::cuda
