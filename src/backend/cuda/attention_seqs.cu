// Attention of many sequences in one launch: the thread blocks of attention.cu
// (attention_blocks.cuh, attention_tc_blocks.cuh), each given one sequence's Params. A block finds
// its sequence in an uploaded table by its block index; the table lists, per sequence, where its
// blocks start in each grid and where its partials sit in the workspace. Keys are at their indices
// (kv_pos null), so no position list is uploaded. A row's Params, splits and folds are those of
// cuda::attention over its sequence alone, hence the same bits (docs/determinism.md).
#include <algorithm>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cuda/attention_combine_slice.cuh"
#include "backend/cuda/attention_host.cuh"
#include "backend/cuda/attention_seq_table.cuh"
#include "backend/cuda/attention_seqs.h"
#include "backend/cuda/attention_tc_wg.cuh"
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/entry_table.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/op_errors.h"
#include "backend/cuda/pdl.cuh"

namespace cairn::cuda {
namespace attn {
namespace {

template <typename T, int S>
__global__ void __launch_bounds__(kThreads)
    seqs_split_kernel(Params base, const __grid_constant__ SeqTable seqs, int n_seqs) {
  pdl_enter();
  extern __shared__ float4 smem4[];
  const SeqEntry& e = find_seq<Grid::kSplit>(seqs.entries(), n_seqs, blockIdx.z, gridDim.z);
  const Params p = seq_params(base, e);
  if (static_cast<int>(blockIdx.x) >= p.n_splits) return;  // a shorter sequence
  const int row0 = (blockIdx.z - e.split_begin) * kWarps * kSplitRows;
  split_block<T, S>(p, reinterpret_cast<float*>(smem4), blockIdx.y, row0, blockIdx.x);
  if (base.arrivals == nullptr) return;
  combine_when_last<S, kThreads>(p, base.arrivals + blockIdx.z * gridDim.y + blockIdx.y,
                                 static_cast<unsigned>(p.n_splits), blockIdx.y, row0,
                                 kWarps * kSplitRows);
}

template <int S>
__global__ void __launch_bounds__(kThreads)
    seqs_combine_kernel(Params base, const __grid_constant__ SeqTable seqs, int n_seqs) {
  pdl_enter();
  const SeqEntry& e = find_seq<Grid::kCombine>(seqs.entries(), n_seqs, blockIdx.x, gridDim.x);
  const Params p = seq_params(base, e);
  const int64_t row =
      static_cast<int64_t>(blockIdx.x - e.combine_begin) * kWarps + (threadIdx.x >> 5);
  if (row >= static_cast<int64_t>(p.n_q) * p.n_heads) return;
  combine_row<S>(p, row);
}

// Block (b, y) folds output row b − combine_begin of its sequence (combine_begin counts rows
// here): all of it (Sliced false, gridDim.y 1), or its dims [32y, 32y + 32).
template <int S, bool Sliced>
__global__ void __launch_bounds__(kThreads)
    seqs_combine_staged_kernel(Params base, const __grid_constant__ SeqTable seqs, int n_seqs) {
  pdl_enter();
  extern __shared__ float4 smem4[];
  const SeqEntry& e = find_seq<Grid::kCombine>(seqs.entries(), n_seqs, blockIdx.x, gridDim.x);
  float* smem = reinterpret_cast<float*>(smem4);
  if constexpr (Sliced)
    combine_slice_staged(seq_params(base, e), blockIdx.x - e.combine_begin,
                         static_cast<int>(blockIdx.y), smem);
  else
    combine_row_staged<S>(seq_params(base, e), blockIdx.x - e.combine_begin, smem);
}

template <typename T, int S>
__global__ void __launch_bounds__(kThreads)
    seqs_fused_kernel(Params base, const __grid_constant__ SeqTable seqs, int n_seqs) {
  pdl_enter();
  extern __shared__ float4 smem4[];
  const SeqEntry& e = find_seq<Grid::kFused>(seqs.entries(), n_seqs, blockIdx.x, gridDim.x);
  fused_block<T, S>(seq_params(base, e), reinterpret_cast<float*>(smem4), blockIdx.y,
                    (blockIdx.x - e.fused_begin) * kWarps * kFusedRows);
}

// Block x takes key splits [x · per_block, (x + 1) · per_block) of its sequence: on 16-row
// blocks of NT threads (Slots 0), or on narrow one-warp blocks staging through Slots slots
// (decode grids: every sequence at most 8 rows a KV head). Exact: the products' precision
// (attention_tc_math.cuh; one kernel each).
template <typename T, int HD, int NT, int Slots, bool Exact>
__device__ __forceinline__ void split_blocks(const Params& base, const SeqTable& seqs, int n_seqs,
                                             int per_block) {
  pdl_enter();
  extern __shared__ float4 smem4[];
  const SeqEntry& e = find_seq<Grid::kSplit>(seqs.entries(), n_seqs, blockIdx.z, gridDim.z);
  const Params p = seq_params(base, e);
  const int first = static_cast<int>(blockIdx.x) * per_block;
  if (first >= p.n_splits) return;  // a shorter sequence
  uint8_t* smem = reinterpret_cast<uint8_t*>(smem4);
  const int row0 = (blockIdx.z - e.split_begin) * tc::kRows,
            end = min(first + per_block, p.n_splits);
  if constexpr (Slots > 0)
    tc::narrow_split_block<T, HD, Slots, Exact>(p, smem, blockIdx.y, row0, first, end);
  else
    tc::any_split_block<T, HD, NT, Exact>(p, smem, blockIdx.y, row0, first, end);
  if (base.arrivals == nullptr) return;
  const auto expected = static_cast<unsigned>((p.n_splits + per_block - 1) / per_block);
  combine_when_last<HD / 32, NT>(p, base.arrivals + blockIdx.z * gridDim.y + blockIdx.y, expected,
                                 blockIdx.y, row0, Slots > 0 ? tc::kNarrowRows : tc::kRows);
}

// The one-warp blocks (16 rows, or narrow with Slots > 0).
template <typename T, int HD, int Slots, bool Exact>
__global__ void __launch_bounds__(32)
    seqs_tc_split_kernel(Params base, const __grid_constant__ SeqTable seqs, int n_seqs,
                         int per_block) {
  split_blocks<T, HD, 32, Slots, Exact>(base, seqs, n_seqs, per_block);
}

// The four-warp blocks of small grids (tc::coop_split_block), bounded to one block an SM:
// left to itself the compiler held them to 128 registers a thread and spilled, where a small
// grid (fewer blocks than twice the SMs) never needs more than two blocks an SM.
template <typename T, int HD, bool Exact>
__global__ void __launch_bounds__(kThreads, 1)
    seqs_tc_wide_kernel(Params base, const __grid_constant__ SeqTable seqs, int n_seqs,
                        int per_block) {
  split_blocks<T, HD, kThreads, 0, Exact>(base, seqs, n_seqs, per_block);
}

// The grid's last blocks first: a sequence's last rows see the most keys when causal. Wg: the
// products on warpgroups (tc::WgProducts), else each warp's mma.sync (tc::WarpProducts).
template <typename T, int HD, int W, bool Exact, bool Wg>
__global__ void __launch_bounds__(W * 32)
    seqs_tc_fused_kernel(Params base, const __grid_constant__ SeqTable seqs, int n_seqs) {
  pdl_enter();
  extern __shared__ float4 smem4[];
  const int block = static_cast<int>(gridDim.x - 1 - blockIdx.x);
  const SeqEntry& e = find_seq<Grid::kFused>(seqs.entries(), n_seqs, block, gridDim.x);
  const int row0 = (block - e.fused_begin) * W * tc::kRows;
  uint8_t* smem = reinterpret_cast<uint8_t*>(smem4);
  using A = std::conditional_t<Wg, tc::WgProducts<T, HD, Exact>, tc::WarpProducts<T, HD, Exact>>;
  tc::fused_block<T, HD, W, A>(seq_params(base, e), smem, blockIdx.y, row0);
}

// The table and the grids of one call.
struct Plan {
  std::vector<SeqEntry> seqs;
  int64_t split_blocks = 0, fused_blocks = 0, combine_blocks = 0, fused_rows = 0;
  int64_t ws_floats = 0;
  int64_t max_rows = 0;  // the most rows of one KV head a sequence has
  int max_splits = 0;
  bool split_path = false;
  bool staged_combine = false;      // a block a row (combine_row_staged); combine_begin counts rows
  bool tensor_cores = false;        // the rows' arithmetic (tensor_core_rows)
  int fused_warps = kWarps;         // a tensor-core fused block's (tc::fused_warps)
  bool wide_blocks = false;         // a small split grid (tc::wide_staging): four-warp tc blocks
  bool last_block_combine = false;  // the split blocks combine (combine_when_last), no grid
  bool quant_pieces8 = false;       // quantized rows copied in 8-byte pieces (pieces8_ok)
};

// 16-byte loads of K/V rows: rows a multiple of 16 bytes, every row start aligned.
bool vec_ok(const Params& base, size_t esize, std::span<const void* const> starts) {
  if ((base.head_dim * esize) % 16 != 0) return false;
  for (const void* s : starts)
    if (reinterpret_cast<uintptr_t>(s) % 16 != 0) return false;
  return true;
}

// The quantized rows' 8-byte pieces (attention_tc_quant_warp.cuh): row_bytes a multiple of 8
// and every row start 8-byte aligned (a null page is never read).
bool pieces8_ok(const Params& base, std::span<const ops::AttentionSeq> seqs,
                std::span<const void* const> pages) {
  const auto aligned = [](const void* s) { return reinterpret_cast<uintptr_t>(s) % 8 == 0; };
  if (base.row_bytes % 8 != 0) return false;
  if (!pages.empty())
    return base.k_off % 8 == 0 && base.v_off % 8 == 0 &&
           std::all_of(pages.begin(), pages.end(), aligned);
  return std::all_of(seqs.begin(), seqs.end(), [&](const ops::AttentionSeq& q) {
    return q.n_q == 0 || (aligned(q.k->raw()) && aligned(q.v->raw()));
  });
}

// Speed only (the same folds): a split path's rows of many splits are folded a block a row
// (combine_row_staged) while they are few; its combine grid then counts rows, not warps.
void plan_staged_combine(Plan& plan, int n_heads) {
  int64_t rows = 0;
  for (const SeqEntry& e : plan.seqs) rows += static_cast<int64_t>(e.n_q) * n_heads;
  plan.staged_combine = staged_combine(plan.max_splits, rows);
  if (!plan.staged_combine) return;
  plan.combine_blocks = 0;
  for (SeqEntry& e : plan.seqs) {
    e.combine_begin = static_cast<int32_t>(plan.combine_blocks);
    plan.combine_blocks += static_cast<int64_t>(e.n_q) * n_heads;
  }
}

// pages: the paged call's page table (host), else empty.
Plan plan_for(const Params& base, std::span<const ops::AttentionSeq> seqs, bool quantized,
              DType dtype, std::span<const void* const> pages) {
  Plan plan;
  plan.tensor_cores = tensor_core_rows(dtype, base.head_dim, quantized);
  plan.quant_pieces8 = quantized && pieces8_ok(base, seqs, pages);
  int64_t rows = 0;
  for (const ops::AttentionSeq& s : seqs) rows += s.n_q * base.group;
  if (plan.tensor_cores) plan.fused_warps = tc::fused_warps(base.head_dim, rows, base.n_kv_heads);
  const BlockShape shape = block_shape(plan.tensor_cores, plan.fused_warps);
  const size_t esize = dtype == DType::kF32 ? 4 : 2;
  const bool paged_vec = !pages.empty() && !quantized && base.k_off % 16 == 0 &&
                         base.v_off % 16 == 0 && vec_ok(base, esize, pages);
  for (const ops::AttentionSeq& s : seqs) {
    if (s.n_q == 0) continue;
    SeqEntry e{};
    if (pages.empty()) {
      e.k = s.k->raw(), e.v = s.v->raw();
      const void* starts[2] = {e.k, e.v};
      e.vec_loads = !quantized && vec_ok(base, esize, starts);
    } else {
      e.page_begin = s.page_begin;
      e.vec_loads = paged_vec;
    }
    e.q_begin = s.q_begin, e.ws_offset = plan.ws_floats;
    e.n_q = static_cast<int32_t>(s.n_q), e.n_kv = static_cast<int32_t>(s.n_kv);
    e.split_begin = static_cast<int32_t>(plan.split_blocks);
    e.fused_begin = static_cast<int32_t>(plan.fused_blocks);
    e.combine_begin = static_cast<int32_t>(plan.combine_blocks);
    const int64_t rows_per_head = s.n_q * base.group;
    const int n_splits = static_cast<int>((s.n_kv + kSplitKeys - 1) / kSplitKeys);
    plan.split_blocks += blocks_for(rows_per_head, shape.split_rows);
    plan.fused_blocks += blocks_for(rows_per_head, shape.fused_rows);
    plan.combine_blocks += blocks_for(s.n_q * base.n_heads, kWarps);
    plan.fused_rows += rows_per_head;
    plan.ws_floats += s.n_q * base.n_heads * n_splits * (base.head_dim + 2);
    plan.max_splits = std::max(plan.max_splits, n_splits);
    plan.max_rows = std::max(plan.max_rows, rows_per_head);
    plan.seqs.push_back(e);
  }
  // Speed only: the split path when the fused grid would not fill the GPU twice
  // or its blocks would be mostly empty (decode: a few rows per sequence).
  const bool fills = base.n_kv_heads * plan.fused_blocks >= 2 * sm_count();
  const bool sparse = 2 * plan.fused_rows < plan.fused_blocks * shape.fused_rows;
  plan.split_path = plan.max_splits > 1 && (!fills || sparse) && plan.split_blocks <= 65535 &&
                    plan.ws_floats * sizeof(float) <= kMaxWorkspace;
  if (plan.split_path) plan_staged_combine(plan, base.n_heads);
  plan.wide_blocks =
      tc::wide_staging(static_cast<int64_t>(plan.max_splits) * base.n_kv_heads * plan.split_blocks);
  // Small grids (wide_blocks) combine in their last blocks, whichever blocks run them.
  plan.last_block_combine =
      plan.split_path && !plan.staged_combine && last_block_combine(plan.wide_blocks);
  return plan;
}

// The combine of the split path: a warp a row, or a block a row (staged).
template <int S>
void launch_combine(const Params& base, const Plan& plan, const SeqTable& table) {
  const int n = static_cast<int>(plan.seqs.size());
  const auto blocks = static_cast<unsigned>(plan.combine_blocks);
  if (!plan.staged_combine)
    return launch_kernel("seqs_combine_kernel", seqs_combine_kernel<S>, blocks, kThreads, 0, base,
                         table, n);
  if (combine_slices()) {
    static const bool ready =
        (allow_smem(seqs_combine_staged_kernel<S, true>, Slice::kSmemBytes), true);
    (void)ready;
    const dim3 grid(blocks, static_cast<unsigned>((base.head_dim + 31) / 32));
    return launch_kernel("seqs_combine_staged_kernel", seqs_combine_staged_kernel<S, true>, grid,
                         kThreads, Slice::kSmemBytes, base, table, n);
  }
  static const bool ready =
      (allow_smem(seqs_combine_staged_kernel<S, false>, Staged<S>::kSmemBytes), true);
  (void)ready;
  launch_kernel("seqs_combine_staged_kernel", seqs_combine_staged_kernel<S, false>, blocks,
                kThreads, Staged<S>::kSmemBytes, base, table, n);
}

template <typename T, int S>
void launch(const Params& base, const Plan& plan, const SeqTable& table) {
  const int n = static_cast<int>(plan.seqs.size());
  const int max_stride = smem_stride(32 * S);
  if (plan.split_path) {
    static const bool ready =
        (allow_smem(seqs_split_kernel<T, S>, smem_bytes(kSplitRows, max_stride)), true);
    (void)ready;
    const dim3 grid(static_cast<unsigned>(plan.max_splits), static_cast<unsigned>(base.n_kv_heads),
                    static_cast<unsigned>(plan.split_blocks));
    launch_kernel("seqs_split_kernel", seqs_split_kernel<T, S>, grid, kThreads,
                  smem_bytes(kSplitRows, base.stride), base, table, n);
    if (!plan.last_block_combine) launch_combine<S>(base, plan, table);
    return;
  }
  static const bool ready =
      (allow_smem(seqs_fused_kernel<T, S>, smem_bytes(kFusedRows, max_stride)), true);
  (void)ready;
  const dim3 grid(static_cast<unsigned>(plan.fused_blocks), static_cast<unsigned>(base.n_kv_heads));
  launch_kernel("seqs_fused_kernel", seqs_fused_kernel<T, S>, grid, kThreads,
                smem_bytes(kFusedRows, base.stride), base, table, n);
}

// The narrow blocks' grid (one block of 8 rows a sequence and KV head, per_block splits each).
template <typename T, int HD, int Slots, bool Exact>
void launch_narrow(const Params& base, const Plan& plan, const SeqTable& table, dim3 grid,
                   int per_block) {
  const size_t smem = tc::NarrowLayout<HD>::bytes(Slots);
  static const bool ready = (allow_smem(seqs_tc_split_kernel<T, HD, Slots, Exact>, smem), true);
  (void)ready;
  launch_kernel("seqs_tc_split_kernel", seqs_tc_split_kernel<T, HD, Slots, Exact>, grid, 32, smem,
                base, table, static_cast<int>(plan.seqs.size()), per_block);
}

template <typename T, int HD, int W, bool Exact, bool Wg>
void launch_tc_fused(const Params& base, const Plan& plan, const SeqTable& table) {
  constexpr auto kernel = seqs_tc_fused_kernel<T, HD, W, Exact, Wg>;
  size_t smem = tc::Layout<HD>::bytes(W, true);
  if constexpr (Wg) smem = tc::WgLayout<HD>::bytes(W);
  static const bool ready = (allow_smem(kernel, smem), true);
  (void)ready;
  const dim3 grid(static_cast<unsigned>(plan.fused_blocks), static_cast<unsigned>(base.n_kv_heads));
  launch_kernel(Wg ? "seqs_wg_fused_kernel" : "seqs_tc_fused_kernel", kernel, grid, W * 32, smem,
                base, table, static_cast<int>(plan.seqs.size()));
}

// The fused grid on plan.fused_warps warps a block, on warpgroup products where they run.
template <typename T, int HD, bool Exact>
void launch_fused(const Params& base, const Plan& plan, const SeqTable& table) {
  if constexpr (HD <= 128) {
    if (tc::warpgroup_fused(HD)) {
      if constexpr (HD == 128)
        if (plan.fused_warps == 12)
          return launch_tc_fused<T, HD, 12, Exact, true>(base, plan, table);
      return launch_tc_fused<T, HD, kWarps, Exact, true>(base, plan, table);
    }
  }
  if constexpr (HD == 128)
    if (plan.fused_warps == 12) return launch_tc_fused<T, HD, 12, Exact, false>(base, plan, table);
  launch_tc_fused<T, HD, kWarps, Exact, false>(base, plan, table);
}

template <typename T, int HD, bool Exact>
void launch_tc(const Params& base, const Plan& plan, const SeqTable& table) {
  const int n = static_cast<int>(plan.seqs.size());
  if (plan.split_path) {
    const size_t smem = tc::Layout<HD>::split_bytes(false),
                 wide_smem = tc::Layout<HD>::split_bytes(true);
    static const bool ready = (allow_smem(seqs_tc_split_kernel<T, HD, 0, Exact>, smem),
                               allow_smem(seqs_tc_wide_kernel<T, HD, Exact>, wide_smem), true);
    (void)ready;
    const int64_t blocks =
        static_cast<int64_t>(plan.max_splits) * base.n_kv_heads * plan.split_blocks;
    const bool wide = plan.wide_blocks;
    const bool quantized = base.group_size > 0;
    const int per_block = wide ? 1 : tc::splits_per_block(blocks, plan.max_splits, quantized);
    const dim3 grid(static_cast<unsigned>((plan.max_splits + per_block - 1) / per_block),
                    static_cast<unsigned>(base.n_kv_heads),
                    static_cast<unsigned>(plan.split_blocks));
    const int narrow = plan.max_rows <= tc::kNarrowRows ? tc::narrow_block_slots(quantized) : 0;
    if (wide)
      launch_kernel("seqs_tc_wide_kernel", seqs_tc_wide_kernel<T, HD, Exact>, grid, kThreads,
                    wide_smem, base, table, n, per_block);
    else if (narrow == 1)
      launch_narrow<T, HD, 1, Exact>(base, plan, table, grid, per_block);
    else if (narrow == 2)
      launch_narrow<T, HD, 2, Exact>(base, plan, table, grid, per_block);
    else
      launch_kernel("seqs_tc_split_kernel", seqs_tc_split_kernel<T, HD, 0, Exact>, grid, 32, smem,
                    base, table, n, per_block);
    if (!plan.last_block_combine) launch_combine<HD / 32>(base, plan, table);
    return;
  }
  launch_fused<T, HD, Exact>(base, plan, table);
}

// The tensor-core kernels of the call's precision (base.fast).
template <typename T, int HD>
void launch_tc(const Params& base, const Plan& plan, const SeqTable& table) {
  if (base.fast) return launch_tc<T, HD, false>(base, plan, table);
  launch_tc<T, HD, true>(base, plan, table);
}

template <typename T>
void launch_dtype(const Params& base, const Plan& plan, const SeqTable& table) {
  if constexpr (sizeof(T) == 2) {
    if (plan.tensor_cores) {
      if (base.head_dim == 64) return launch_tc<T, 64>(base, plan, table);
      if (base.head_dim == 128) return launch_tc<T, 128>(base, plan, table);
      return launch_tc<T, 256>(base, plan, table);
    }
  }
  if (base.head_dim <= 32) return launch<T, 1>(base, plan, table);
  if (base.head_dim <= 64) return launch<T, 2>(base, plan, table);
  if (base.head_dim <= 128) return launch<T, 4>(base, plan, table);
  launch<T, 8>(base, plan, table);
}

}  // namespace
}  // namespace attn

namespace {

// What both entries share: base's q/out/shape fields from q and ap; n_kv_heads given.
attn::Params base_params(const Tensor& q, const ops::AttentionParams& ap, int64_t n_kv_heads,
                         const char* op) {
  using namespace attn;
  Params base{};
  base.n_heads = static_cast<int>(q.dim(1)), base.head_dim = static_cast<int>(q.dim(2));
  base.n_kv_heads = static_cast<int>(n_kv_heads);
  if (base.head_dim > kMaxHeadDim)
    unsupported(op, "head_dim " + std::to_string(base.head_dim) + " > 256");
  base.group = base.n_heads / base.n_kv_heads;
  base.stride = smem_stride(base.head_dim);
  base.scale = ap.scale, base.softcap = ap.softcap, base.window = ap.window;
  base.fast = attention_fast_products();
  base.q = q.data<float>();
  if (ap.kv_quant.enabled()) {
    base.group_size = ap.kv_quant.group_size;
    base.row_bytes = static_cast<int>(ap.kv_quant.row_bytes(base.head_dim));
  }
  return base;
}

// Uploads the tables and launches the kernels of K/V dtype `dtype`.
void run(attn::Params base, const attn::Plan& plan, std::span<const int32_t> q_positions,
         const ops::AttentionParams& ap, DType dtype, const char* op) {
  using namespace attn;
  std::lock_guard<std::mutex> lock(workspace().mutex);
  base.q_pos = upload(q_positions);
  const SeqTable table = entry_table<kHeldSeqs>(std::span<const SeqEntry>(plan.seqs));
  if (plan.split_path)
    base.part_ml = static_cast<float*>(
        workspace().reserve(static_cast<size_t>(plan.ws_floats) * sizeof(float)));
  if (plan.last_block_combine)
    base.arrivals = workspace().arrivals(static_cast<size_t>(plan.split_blocks) * base.n_kv_heads);
  if (ap.kv_quant.enabled() && plan.tensor_cores) {
    base.quant_bits = ap.kv_quant.bits;  // staged as f16 tiles (attention_tc_staging.cuh)
    base.quant_piece = plan.quant_pieces8 ? 8 : 4;
    base.piece_div = page_divisor(static_cast<uint32_t>(base.row_bytes / base.quant_piece));
    return launch_dtype<__half>(base, plan, table);
  }
  if (ap.kv_quant.enabled())
    return ap.kv_quant.bits == 8 ? launch_dtype<Q8Rows>(base, plan, table)
                                 : launch_dtype<Q4Rows>(base, plan, table);
  switch (dtype) {
    case DType::kF32:
      return launch_dtype<float>(base, plan, table);
    case DType::kBF16:
      return launch_dtype<__nv_bfloat16>(base, plan, table);
    case DType::kF16:
      return launch_dtype<__half>(base, plan, table);
    default:
      unsupported(op, "K/V dtype");
  }
}

}  // namespace

void attention_seqs(const Tensor& q, std::span<const ops::AttentionSeq> seqs,
                    std::span<const int32_t> q_positions, const ops::AttentionParams& ap,
                    Tensor& out) {
  if (seqs.empty() || q.dim(0) == 0 || q.dim(2) == 0) return;
  attn::Params base = base_params(q, ap, seqs.front().k->dim(1), "attention_seqs");
  base.out = out.raw(), base.out_dtype = out.dtype();
  const DType dtype = seqs.front().k->dtype();
  const attn::Plan plan = attn::plan_for(base, seqs, ap.kv_quant.enabled(), dtype, {});
  if (plan.seqs.empty()) return;
  run(base, plan, q_positions, ap, dtype, "attention_seqs");
}

void attention_pages(const Tensor& q, const ops::KvPages& kv,
                     std::span<const ops::AttentionSeq> seqs, std::span<const int32_t> q_positions,
                     const ops::AttentionParams& ap, Tensor& out) {
  if (seqs.empty() || q.dim(0) == 0 || q.dim(2) == 0 || kv.pages.empty()) return;
  attn::Params base = base_params(q, ap, kv.n_kv_heads, "attention_pages");
  base.out = out.raw(), base.out_dtype = out.dtype();
  base.k_off = static_cast<int64_t>(kv.k_offset), base.v_off = static_cast<int64_t>(kv.v_offset);
  base.page_tokens = static_cast<int>(kv.page_tokens);
  base.page_div = attn::page_divisor(static_cast<uint32_t>(kv.page_tokens));
  const attn::Plan plan = attn::plan_for(base, seqs, ap.kv_quant.enabled(), kv.dtype, kv.pages);
  if (plan.seqs.empty()) return;
  // The page table goes up with the call's other tables (a decode step's is the
  // same for every layer of a group, so small ones are served from the ring).
  base.pages = static_cast<const uint8_t* const*>(upload(kv.pages.data(), kv.pages.size_bytes()));
  run(base, plan, q_positions, ap, kv.dtype, "attention_pages");
}

}  // namespace cairn::cuda
