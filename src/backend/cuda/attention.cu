// Causal attention on the GPU. Two ways to run the same arithmetic
// (attention_tile.cuh, attention_math.cuh; for bf16/f16 K/V of head_dim 64, 128 and
// 256 the tensor-core arithmetic of attention_tc_math.cuh instead):
//   split path  — few rows (decode): a thread block per (key split, KV head, rows)
//                 writes each split's partial (max, sum, acc) to a workspace; a
//                 combine kernel folds them per row in split order.
//   fused path  — many rows (prefill): a thread block per (rows, KV head) walks
//                 every key split in order and folds each partial as it is done.
// (attention_blocks.cuh and attention_tc_blocks.cuh hold the blocks' code;
// attention_seqs.cu runs the same blocks for many sequences in one launch.)
// Which one runs changes the speed, never the bits: a row's splits, key blocks,
// dot products and folds are the same code in the same order either way.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "backend/cuda/attention.h"
#include "backend/cuda/attention_host.cuh"
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/op_errors.h"
#include "backend/cuda/wgmma_gemm.h"

namespace cairn::cuda {
namespace attn {
namespace {

template <typename T, int S>
__global__ void __launch_bounds__(kThreads) split_kernel(Params p) {
  extern __shared__ float4 smem4[];
  split_block<T, S>(p, reinterpret_cast<float*>(smem4), blockIdx.y,
                    blockIdx.z * kWarps * kSplitRows, blockIdx.x);
}

// One warp per output row.
template <int S>
__global__ void __launch_bounds__(kThreads) combine_kernel(Params p) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  if (row >= static_cast<int64_t>(p.n_q) * p.n_heads) return;
  combine_row<S>(p, row);
}

template <typename T, int S>
__global__ void __launch_bounds__(kThreads) fused_kernel(Params p) {
  extern __shared__ float4 smem4[];
  fused_block<T, S>(p, reinterpret_cast<float*>(smem4), blockIdx.y,
                    blockIdx.x * kWarps * kFusedRows);
}

// Tensor-core blocks: one warp per (key split, KV head, 16 rows); small grids take
// tc_wide_kernel's four warps instead. Exact: the products' precision (attention_tc_math.cuh;
// one kernel each).
template <typename T, int HD, bool Exact>
__global__ void __launch_bounds__(32) tc_split_kernel(Params p) {
  extern __shared__ float4 smem4[];
  tc::split_block<T, HD, Exact>(p, reinterpret_cast<uint8_t*>(smem4), blockIdx.y,
                                blockIdx.z * tc::kRows, blockIdx.x, blockIdx.x + 1);
}

// The four-warp blocks alone, bounded to one block an SM (attention_seqs.cu's
// seqs_tc_wide_kernel says why).
template <typename T, int HD, bool Exact>
__global__ void __launch_bounds__(kThreads, 1) tc_wide_kernel(Params p) {
  extern __shared__ float4 smem4[];
  tc::coop_split_block<T, HD, Exact>(p, reinterpret_cast<uint8_t*>(smem4), blockIdx.y,
                                     blockIdx.z * tc::kRows, blockIdx.x, blockIdx.x + 1);
}

// tc::fused_warps warps per (16 rows a warp, KV head); the last rows (the most keys, when
// causal) first.
template <typename T, int HD, int W, bool Exact>
__global__ void __launch_bounds__(W * 32) tc_fused_kernel(Params p) {
  extern __shared__ float4 smem4[];
  const int tile = static_cast<int>(gridDim.x - 1 - blockIdx.x);
  tc::fused_block<T, HD, W, tc::WarpProducts<T, HD, Exact>>(p, reinterpret_cast<uint8_t*>(smem4),
                                                            blockIdx.y, tile * W * tc::kRows);
}

template <typename T, int HD, int W, bool Exact>
void launch_tc_fused(const Params& p) {
  const size_t smem = tc::Layout<HD>::bytes(W, true);
  static const bool ready = (allow_smem(tc_fused_kernel<T, HD, W, Exact>, smem), true);
  (void)ready;
  const dim3 grid(blocks_for(static_cast<int64_t>(p.n_q) * p.group, W * tc::kRows),
                  static_cast<unsigned>(p.n_kv_heads));
  tc_fused_kernel<T, HD, W, Exact><<<grid, W * 32, smem, stream()>>>(p);
  check_launch("attention tc_fused_kernel");
}

template <typename T, int HD, bool Exact>
void launch_tc(const Params& p, bool split_path) {
  const int rows_per_head = p.n_q * p.group;
  if (split_path) {
    const size_t smem = tc::Layout<HD>::split_bytes(false),
                 wide_smem = tc::Layout<HD>::split_bytes(true);
    static const bool ready = (allow_smem(tc_split_kernel<T, HD, Exact>, smem),
                               allow_smem(tc_wide_kernel<T, HD, Exact>, wide_smem), true);
    (void)ready;
    const dim3 grid(static_cast<unsigned>(p.n_splits), static_cast<unsigned>(p.n_kv_heads),
                    blocks_for(rows_per_head, tc::kRows));
    if (tc::wide_staging(static_cast<int64_t>(grid.x) * grid.y * grid.z))
      tc_wide_kernel<T, HD, Exact><<<grid, kThreads, wide_smem, stream()>>>(p);
    else
      tc_split_kernel<T, HD, Exact><<<grid, 32, smem, stream()>>>(p);
    check_launch("attention tc_split_kernel");
    combine_kernel<HD / 32>
        <<<blocks_for(static_cast<int64_t>(p.n_q) * p.n_heads, kWarps), kThreads, 0, stream()>>>(p);
    check_launch("attention combine_kernel");
    return;
  }
  if constexpr (HD == 128)
    if (tc::fused_warps(HD, rows_per_head, p.n_kv_heads) == 12)
      return launch_tc_fused<T, HD, 12, Exact>(p);
  launch_tc_fused<T, HD, kWarps, Exact>(p);
}

// The tensor-core kernels of the call's precision (p.fast).
template <typename T, int HD>
void launch_tc(const Params& p, bool split_path) {
  if (p.fast) return launch_tc<T, HD, false>(p, split_path);
  launch_tc<T, HD, true>(p, split_path);
}

template <typename T, int S>
void launch(const Params& p, bool split_path) {
  const int max_stride = smem_stride(32 * S);
  const int rows_per_head = p.n_q * p.group;
  if (split_path) {
    static const bool ready =
        (allow_smem(split_kernel<T, S>, smem_bytes(kSplitRows, max_stride)), true);
    (void)ready;
    const dim3 grid(static_cast<unsigned>(p.n_splits), static_cast<unsigned>(p.n_kv_heads),
                    blocks_for(rows_per_head, kWarps * kSplitRows));
    split_kernel<T, S><<<grid, kThreads, smem_bytes(kSplitRows, p.stride), stream()>>>(p);
    check_launch("attention split_kernel");
    combine_kernel<S>
        <<<blocks_for(static_cast<int64_t>(p.n_q) * p.n_heads, kWarps), kThreads, 0, stream()>>>(p);
    check_launch("attention combine_kernel");
    return;
  }
  static const bool ready =
      (allow_smem(fused_kernel<T, S>, smem_bytes(kFusedRows, max_stride)), true);
  (void)ready;
  const dim3 grid(blocks_for(rows_per_head, kWarps * kFusedRows),
                  static_cast<unsigned>(p.n_kv_heads));
  fused_kernel<T, S><<<grid, kThreads, smem_bytes(kFusedRows, p.stride), stream()>>>(p);
  check_launch("attention fused_kernel");
}

template <typename T>
void launch_dtype(const Params& p, bool split_path, bool tensor_cores) {
  if constexpr (sizeof(T) == 2) {
    if (tensor_cores) {
      if (p.head_dim == 64) return launch_tc<T, 64>(p, split_path);
      if (p.head_dim == 128) return launch_tc<T, 128>(p, split_path);
      return launch_tc<T, 256>(p, split_path);
    }
  }
  if (p.head_dim <= 32) return launch<T, 1>(p, split_path);
  if (p.head_dim <= 64) return launch<T, 2>(p, split_path);
  if (p.head_dim <= 128) return launch<T, 4>(p, split_path);
  launch<T, 8>(p, split_path);
}

// [n_key_blocks, 2]: the min and max position of each key block's keys.
std::vector<int32_t> key_block_ranges(std::span<const int32_t> kv_positions) {
  const size_t n = kv_positions.size();
  std::vector<int32_t> r(2 * ((n + kKeyBlock - 1) / kKeyBlock));
  for (size_t b = 0; b * kKeyBlock < n; ++b) {
    const auto first = kv_positions.begin() + static_cast<ptrdiff_t>(b * kKeyBlock);
    const auto last =
        kv_positions.begin() + static_cast<ptrdiff_t>(std::min(n, (b + 1) * kKeyBlock));
    const auto [lo, hi] = std::minmax_element(first, last);
    r[2 * b] = *lo, r[2 * b + 1] = *hi;
  }
  return r;
}

std::atomic<bool>& tensor_core_switch() {
  static std::atomic<bool> on{[] {
    const char* v = std::getenv("CAIRN_ATTENTION_TENSOR_CORES");
    return v == nullptr || std::string(v) != "0";
  }()};
  return on;
}

std::atomic<bool>& fast_products_switch() {
  static std::atomic<bool> on{[] {
    const char* v = std::getenv("CAIRN_ATTENTION_PRECISION");
    return v != nullptr && std::string(v) == "fast";
  }()};
  return on;
}

// 0: by the grid's size.
std::atomic<int>& forced_splits_per_block() {
  static std::atomic<int> n{[] {
    const char* v = std::getenv("CAIRN_ATTENTION_SPLITS_PER_BLOCK");
    return v ? std::max(1, std::atoi(v)) : 0;
  }()};
  return n;
}

// 4 or 12: every head_dim-128 tensor-core fused grid's blocks; 0: by the grid's size
// (CAIRN_ATTENTION_FUSED_WARPS; default 0).
std::atomic<int>& forced_fused_warps() {
  static std::atomic<int> warps{[] {
    const char* v = std::getenv("CAIRN_ATTENTION_FUSED_WARPS");
    const int w = v ? std::atoi(v) : 0;
    return w == 4 || w == 12 ? w : 0;
  }()};
  return warps;
}

// 1: every split grid wide, -1: none, 0: by the grid's size.
std::atomic<int>& forced_wide_blocks() {
  static std::atomic<int> mode{0};
  return mode;
}

// 1: every split grid's combine a block a row, -1: none, 0: by the splits
// (CAIRN_ATTENTION_STAGED_COMBINE; default 0).
std::atomic<int>& forced_staged_combine() {
  static std::atomic<int> mode{[] {
    const char* v = std::getenv("CAIRN_ATTENTION_STAGED_COMBINE");
    return v ? std::clamp(std::atoi(v), -1, 1) : 0;
  }()};
  return mode;
}

// 1: a staged combine a block for each 32 dims of a row, 0: a block a row
// (CAIRN_ATTENTION_COMBINE_SLICES; default 1).
std::atomic<int>& slices_switch() {
  static std::atomic<int> on{[] {
    const char* v = std::getenv("CAIRN_ATTENTION_COMBINE_SLICES");
    return v ? (std::atoi(v) != 0 ? 1 : 0) : 1;
  }()};
  return on;
}

// 1: every tensor-core split grid combines in its last blocks, -1: none, 0: by the grid
// (CAIRN_ATTENTION_LAST_BLOCK_COMBINE; default 0).
std::atomic<int>& forced_last_block() {
  static std::atomic<int> mode{[] {
    const char* v = std::getenv("CAIRN_ATTENTION_LAST_BLOCK_COMBINE");
    return v ? std::clamp(std::atoi(v), -1, 1) : 0;
  }()};
  return mode;
}

// Slots of the narrow decode blocks (1 or 2), 0: none, -1: by the rows' kind
// (CAIRN_ATTENTION_NARROW; default -1).
std::atomic<int>& narrow_slots() {
  static std::atomic<int> n{[] {
    const char* v = std::getenv("CAIRN_ATTENTION_NARROW");
    return v ? std::clamp(std::atoi(v), 0, 2) : -1;
  }()};
  return n;
}

// 1: head_dim 64 and 128 fused grids on warpgroup products where the GPU has them, 0: on
// mma.sync (CAIRN_ATTENTION_WGMMA=0|1; default 1; docs/cuda-attention.md).
std::atomic<int>& warpgroup_switch() {
  static std::atomic<int> on{[] {
    const char* v = std::getenv("CAIRN_ATTENTION_WGMMA");
    return v ? (std::atoi(v) != 0 ? 1 : 0) : 1;
  }()};
  return on;
}

}  // namespace

bool tc::warpgroup_fused(int head_dim) {
  return (head_dim == 64 || head_dim == 128) && warpgroup_switch().load() != 0 &&
         wgmma_gemm_available();
}

int tc::narrow_block_slots(bool quantized) {
  const int slots = narrow_slots().load();
  if (slots >= 0) return slots;
  // A quantized key block's raw rows are decoded into the tile by the block's one warp, a long
  // chain of dependent instructions; one slot (12 KiB a block at head_dim 128 against 20)
  // lets ~16 blocks an SM hide it where two slots let 11, with splits_per_block's one split a
  // block making the blocks to fill them. On an H100 (8B, 32k keys, batch 1, both together):
  // 8-bit KV 112.3-114.9 → 126.7 tok/s, 4-bit 117.6-117.9 → 129.8; for bf16 rows the same
  // gained nothing at 32k (123.1-124.1 → 123.6) and lost at batch 16 × 512 (2,349-2,373 →
  // 2,313), so they keep two.
  return quantized ? 1 : 2;
}

bool staged_combine(int max_splits, int64_t rows) {
  if (const int forced = forced_staged_combine().load(); forced != 0) return forced > 0;
  // A block a row pays off while the rows are few (a warp a row then leaves SMs idle, each
  // warp waiting on its row's loads); on an H100, 64 × 4,096 keys (2,048 rows of 32 splits)
  // took 501 µs a layer staged against 485 a warp a row, 1 × 32,768 (32 rows) 106 against 141.
  return max_splits >= kStagedSplits && rows <= 8 * static_cast<int64_t>(sm_count());
}

bool combine_slices() {
  return slices_switch().load() != 0;
}

bool last_block_combine(bool wide) {
  if (const int forced = forced_last_block().load(); forced != 0) return forced > 0;
  // On an H100 (8B shape, µs a layer, the combine grid / the last blocks): batch 1 × 512 keys
  // (32 four-warp blocks) 17.6-19.0 / 12.0-12.8; 16 × 512 on narrow blocks 25.1 / 28.1-28.3,
  // 128 × 512 129.5 / 136.2, 64 × 4,096 485 / 522: a one-warp block that folds its rows after
  // its splits holds up the grid's tail more than a grid of its own costs.
  return wide;
}

int tc::fused_warps(int head_dim, int64_t rows, int n_kv_heads) {
  constexpr int kWide = 12;
  if (head_dim != 128) return kWarps;
  if (const int forced = forced_fused_warps().load(); forced != 0) return forced;
  // One twelve-warp block an SM: few waves of them lose more in the last, part-empty wave
  // than the extra warps win. On an H100 (132 SMs, head_dim 128, 8 KV heads, µs a layer at
  // 4 / 12 warps): 4,096 rows of 4 heads (688 blocks, 5.2 an SM) 1,279 / 1,406; 8,192 (1,368,
  // 10.4 an SM) 4,801 / 4,786, paged 4,934-4,967 / 4,893.
  const int64_t blocks = (rows + kWide * kRows - 1) / (kWide * kRows) * n_kv_heads;
  return blocks >= 8 * static_cast<int64_t>(sm_count()) ? kWide : kWarps;
}

bool tc::wide_staging(int64_t blocks) {
  if (const int forced = forced_wide_blocks().load(); forced != 0) return forced > 0;
  return blocks < 2 * static_cast<int64_t>(sm_count());
}

int tc::splits_per_block(int64_t blocks, int max_splits, bool quantized) {
  if (const int forced = forced_splits_per_block().load(); forced > 0) return forced;
  if (quantized) return 1;  // as many blocks as fit, to hide the decode (narrow_block_slots)
  // The most splits a block (to 4) that still leave 7 blocks an SM, and at least 4 blocks a
  // sequence's longest row (else the blocks with the most splits trail the rest: 5 splits
  // as 4 + 1 made batch-128 decode 13% slower). On an H200 (one-warp blocks, µs a layer at
  // 1 / 2 / 4 a block): 64 × 4,096 keys 604 / 562 / 542, 1 × 32,768 164 / 146 / 196,
  // 128 × 512 188 / 177 / 171, 16 × 512 43 / 71 / 131.
  const int64_t enough = 7 * static_cast<int64_t>(sm_count());
  int per_block = 1;
  while (per_block < 4 && blocks / (2 * per_block) >= enough && max_splits >= 8 * per_block)
    per_block *= 2;
  return per_block;
}

}  // namespace attn

void set_attention_splits_per_block(int n) {
  attn::forced_splits_per_block().store(std::max(0, n));
}

void set_attention_fused_warps(int warps) {
  attn::forced_fused_warps().store(warps == 4 || warps == 12 ? warps : 0);
}

void set_attention_wide_blocks(int mode) {
  attn::forced_wide_blocks().store(mode > 0 ? 1 : mode < 0 ? -1 : 0);
}

void set_attention_staged_combine(int mode) {
  attn::forced_staged_combine().store(mode > 0 ? 1 : mode < 0 ? -1 : 0);
}

void set_attention_combine_slices(bool on) {
  attn::slices_switch().store(on ? 1 : 0);
}

void set_attention_last_block_combine(int mode) {
  attn::forced_last_block().store(mode > 0 ? 1 : mode < 0 ? -1 : 0);
}

void set_attention_narrow_blocks(int slots) {
  attn::narrow_slots().store(std::clamp(slots, -1, 2));
}

void set_attention_warpgroup_products(bool on) {
  attn::warpgroup_switch().store(on ? 1 : 0);
}
bool attention_warpgroup_products() {
  return attn::warpgroup_switch().load() != 0;
}

void set_attention_tensor_cores(bool on) {
  attn::tensor_core_switch().store(on);
}
bool attention_tensor_cores() {
  return attn::tensor_core_switch().load();
}

void set_attention_fast_products(bool on) {
  attn::fast_products_switch().store(on);
}
bool attention_fast_products() {
  return attn::fast_products_switch().load();
}

void attention(const Tensor& q, const Tensor& k, const Tensor& v,
               std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
               const ops::AttentionParams& ap, Tensor& out) {
  using namespace attn;
  Params p{};
  p.n_q = static_cast<int>(q.dim(0)), p.n_heads = static_cast<int>(q.dim(1));
  p.head_dim = static_cast<int>(q.dim(2));
  p.n_kv = static_cast<int>(k.dim(0)), p.n_kv_heads = static_cast<int>(k.dim(1));
  if (p.head_dim > kMaxHeadDim)
    unsupported("attention", "head_dim " + std::to_string(p.head_dim) + " > 256");
  if (p.n_q == 0 || p.head_dim == 0) return;
  p.group = p.n_heads / p.n_kv_heads;
  p.n_splits = (p.n_kv + kSplitKeys - 1) / kSplitKeys;
  p.stride = smem_stride(p.head_dim);
  p.scale = ap.scale, p.softcap = ap.softcap, p.window = ap.window;
  p.fast = attention_fast_products();
  const size_t esize = k.dtype() == DType::kF32 ? 4 : 2;
  p.vec_loads = (p.head_dim * esize) % 16 == 0 && reinterpret_cast<uintptr_t>(k.raw()) % 16 == 0 &&
                reinterpret_cast<uintptr_t>(v.raw()) % 16 == 0;
  p.q = q.data<float>(), p.k = k.raw(), p.v = v.raw(), p.out = out.raw();
  p.out_dtype = out.dtype();

  std::lock_guard<std::mutex> lock(workspace().mutex);
  p.q_pos = upload(q_positions);
  p.kv_pos = upload(kv_positions);
  const std::vector<int32_t> ranges = key_block_ranges(kv_positions);
  p.block_range = upload(std::span<const int32_t>(ranges));

  const bool tc = tensor_core_rows(k.dtype(), p.head_dim, false);
  const int64_t rows_per_head = static_cast<int64_t>(p.n_q) * p.group;
  const BlockShape shape =
      block_shape(tc, tc ? tc::fused_warps(p.head_dim, rows_per_head, p.n_kv_heads) : kWarps);
  const int64_t fused_blocks =
      p.n_kv_heads * ((rows_per_head + shape.fused_rows - 1) / shape.fused_rows);
  const size_t ws_floats = static_cast<size_t>(p.n_q) * p.n_heads * p.n_splits * (p.head_dim + 2);
  const bool split_path =
      p.n_splits > 1 && fused_blocks < 2 * sm_count() && ws_floats * sizeof(float) <= kMaxWorkspace;
  if (split_path) {
    float* ws = static_cast<float*>(workspace().reserve(ws_floats * sizeof(float)));
    p.part_ml = ws;
    p.part_acc = ws + static_cast<size_t>(p.n_q) * p.n_heads * p.n_splits * 2;
  }
  switch (k.dtype()) {
    case DType::kF32:
      return launch_dtype<float>(p, split_path, false);
    case DType::kBF16:
      return launch_dtype<__nv_bfloat16>(p, split_path, tc);
    case DType::kF16:
      return launch_dtype<__half>(p, split_path, tc);
    default:
      unsupported("attention", "K/V dtype");
  }
}

}  // namespace cairn::cuda
