// Shared memory of the tensor-core attention blocks (attention_tc_blocks.cuh) and the staging
// of K/V key blocks into it. Tiles hold rows of head_dim elements of T (bf16 or f16) as they
// are stored, no conversion; row r's 16-byte chunk c sits at mma::swizzled(r, c), so the eight
// rows one ldmatrix phase reads fall in eight different bank groups.
//
// A thread block's shared memory, bytes:
//   q tiles     per warp: hi [16 rows][head_dim], then lo [16 rows][head_dim]
//   K/V stages  kStages × (K [32 keys][head_dim], then V [32 keys][head_dim]); the split block:
//               two slots of [32 keys][head_dim], K and V of a key block staged apart
//   totals      fused path only, per warp: the folded acc of its rows, [head_dim / 8][2][32]
//               float2 (dim tile, row half, lane: each lane reads and writes its own pairs)
// Staging only moves bytes: whatever way a tile is filled (cp.async, or element by element when
// rows are not 16-byte aligned), it holds the same values, so it never changes a result.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cuda/attention_math.cuh"
#include "backend/cuda/attention_tc_math.cuh"
#include "backend/cuda/mma_tile.cuh"

namespace cairn::cuda::attn::tc {

constexpr int kStages = 2;  // key blocks in flight: the one attended and the next

// Exchange of a wide split block's cooperating warps (attention_tc_coop.cuh), after its stages.
struct CoopShared {
  float max[kBlocksPerSplit][kRows];   // [key block][row]: the row's maximum logit
  float sum[kBlocksPerSplit][kRows];   // [key block][row]: the row's weights summed
  float w[kBlocksPerSplit][4][32][4];  // [key block][key tile][lane]: its C fragments
  float scale[kRows];                  // each row's logit scale (load_q_tile's Rows::scale)
};

template <int HD>
struct Layout {
  static constexpr int kRowBytes = HD * 2;
  static constexpr int kQTile = kRows * kRowBytes;       // one warp's hi (or lo) tile
  static constexpr int kKvTile = kKeyBlock * kRowBytes;  // one K (or V) tile
  static constexpr int kStageBytes = 2 * kKvTile;
  static constexpr int kTotalTile = kRows * HD * 4;  // one warp's folded acc
  // warps: warps per block; totals: whether the block keeps folded totals (fused path).
  __host__ __device__ static constexpr size_t bytes(int warps, bool totals) {
    return static_cast<size_t>(warps) * 2 * kQTile + kStages * kStageBytes +
           (totals ? static_cast<size_t>(warps) * kTotalTile : 0);
  }
  // The split block's: one warp's q tiles, then two slots of one K or V tile each (split_block
  // stages K and V of a key block apart, so that more blocks fit an SM).
  // With wide staging (wide: 128 threads) every key block of the split is staged at once,
  // and the cooperating warps' exchange follows.
  __host__ __device__ static constexpr size_t split_bytes(bool wide) {
    return 2 * kQTile + (wide ? kBlocksPerSplit * kStageBytes + sizeof(CoopShared) : 2 * kKvTile);
  }
  __host__ __device__ static constexpr size_t stages_offset(int warps) {
    return static_cast<size_t>(warps) * 2 * kQTile;
  }
  __host__ __device__ static constexpr size_t totals_offset(int warps) {
    return stages_offset(warps) + kStages * kStageBytes;
  }
};

// Chunk-wise staging by NT threads through cp.async (rows 16-byte aligned): kTpr threads share
// a key row (2 for one warp, else NT / 32); thread t copies chunks c = t % kTpr + kTpr·b of the
// tile's rows t / kTpr, t / kTpr + NT / kTpr, … (a copy instruction reads 32 / kTpr keys'
// 16·kTpr contiguous bytes). Only a row's start is found at run time: a chunk's global offset
// is a constant, and its swizzled offset 16·(c ^ (r % 8)) in row r is 16·(c & ~7) +
// (16·(kTpr·b % 8) ^ x) with x = 16·(t % kTpr ^ r % 8) (t % kTpr < kTpr and kTpr·b % 8 share
// no bit), so a row costs one lookup and each chunk a copy. SlabRows: the tile's layout
// (tile_chunk): rows kRowBytes apart, chunk groups of 8 (64 dims) kSlabBytes apart.
template <int HD, int NT, int SlabRows = 0>
struct Chunks {
  static constexpr int kChunks = HD / 8;
  static constexpr int kRowBytes = SlabRows == 0 ? HD * 2 : 128;
  static constexpr int kSlabBytes = SlabRows == 0 ? 128 : SlabRows * 128;
  static constexpr int kTpr = NT >= 64 ? NT / 32 : 2, kRowsApart = NT / kTpr;
  static constexpr int kRowsEach = kKeyBlock / kRowsApart, kEach = kChunks / kTpr;
  static_assert(kChunks % kTpr == 0 && kKeyBlock % kRowsApart == 0, "every thread copies as many");

  __device__ static int first() { return static_cast<int>(threadIdx.x) % NT % kTpr; }
  // The tile row of this thread's h-th key row.
  __device__ static int row(int h) {
    return h * kRowsApart + static_cast<int>(threadIdx.x) % NT / kTpr;
  }
  __device__ static uint32_t x_of(int r) { return static_cast<uint32_t>((first() ^ (r & 7)) * 16); }
  __device__ static uint32_t at(int b, uint32_t x) {
    return static_cast<uint32_t>(kTpr * b / 8 * kSlabBytes) +
           (static_cast<uint32_t>(kTpr * b % 8 * 16) ^ x);
  }
  // This thread's chunks of the tile row starting at shared address dst (x from its row) from
  // src, the key's head row in global memory; zeros for a null src.
  __device__ static void copy(uint32_t dst, uint32_t x, const uint8_t* src) {
    if (src == nullptr) {
#pragma unroll
      for (int b = 0; b < kEach; ++b) mma::zero16(dst + at(b, x));
      return;
    }
    src += first() * 16;
#pragma unroll
    for (int b = 0; b < kEach; ++b) mma::copy16(dst + at(b, x), src + kTpr * 16 * b);
  }
};

// Keys at or past n_kv and keys of a released page are zeros, stored directly. K (values
// false) or V, the key block's rows into `tile`.
template <int HD, int NT, int SlabRows = 0>
__device__ __forceinline__ void stage_chunks(const Params& p, uint8_t* tile, int kvh, int key0,
                                             bool values) {
  using C = Chunks<HD, NT, SlabRows>;
  const uint32_t token_bytes = static_cast<uint32_t>(p.n_kv_heads) * HD * 2;
  const int64_t head = static_cast<int64_t>(kvh) * HD * 2 + (values ? v_gap(p) : 0);
  const uint32_t base = mma::shared_address(tile);
#pragma unroll
  for (int h = 0; h < C::kRowsEach; ++h) {
    const int j = C::row(h), key = key0 + j;
    const uint8_t* k = key < p.n_kv ? key_k_row(p, key, token_bytes) : nullptr;
    C::copy(base + j * C::kRowBytes, C::x_of(j), k ? k + head : nullptr);
  }
}

// stage_chunks for a one-warp block from its lanes' rows (mine: key key0 + lane's K row start,
// null for zeros): row j's pointer from lane j.
template <int HD>
__device__ __forceinline__ void stage_chunks_rows(const Params& p, uint8_t* tile, int kvh,
                                                  bool values, const uint8_t* mine) {
  using C = Chunks<HD, 32>;
  const int64_t head = static_cast<int64_t>(kvh) * HD * 2 + (values ? v_gap(p) : 0);
  const uint32_t base = mma::shared_address(tile);
#pragma unroll
  for (int h = 0; h < C::kRowsEach; ++h) {
    const int j = C::row(h);
    const auto* k = reinterpret_cast<const uint8_t*>(
        __shfl_sync(kFull, reinterpret_cast<unsigned long long>(mine), j));
    C::copy(base + j * C::kRowBytes, C::x_of(j), k ? k + head : nullptr);
  }
}

// Both K and V of the key block, V's tile right after K's: one row lookup for the two.
template <int HD, int NT>
__device__ __forceinline__ void stage_chunks_kv(const Params& p, uint8_t* tile, int kvh, int key0) {
  using C = Chunks<HD, NT>;
  const uint32_t token_bytes = static_cast<uint32_t>(p.n_kv_heads) * HD * 2;
  const int64_t head = static_cast<int64_t>(kvh) * HD * 2, gap = v_gap(p);
  const uint32_t base = mma::shared_address(tile);
#pragma unroll
  for (int h = 0; h < C::kRowsEach; ++h) {
    const int j = C::row(h), key = key0 + j;
    const uint8_t* k = key < p.n_kv ? key_k_row(p, key, token_bytes) : nullptr;
    const uint32_t dst = base + j * C::kRowBytes, x = C::x_of(j);
    C::copy(dst, x, k ? k + head : nullptr);
    C::copy(dst + Layout<HD>::kKvTile, x, k ? k + head + gap : nullptr);
  }
}

// Element-wise, for rows that are not 16-byte aligned: the same tile values, synchronously.
template <int HD, int NT, int SlabRows = 0>
__device__ __forceinline__ void stage_elements(const Params& p, uint8_t* tile, int kvh, int key0,
                                               bool values) {
  constexpr int kRowBytes = HD * 2;
  const uint32_t token_bytes = static_cast<uint32_t>(p.n_kv_heads) * kRowBytes;
  const int64_t head_off = static_cast<int64_t>(kvh) * kRowBytes + (values ? v_gap(p) : 0);
  for (int i = static_cast<int>(threadIdx.x); i < kKeyBlock * HD; i += NT) {
    const int j = i / HD, c = i % HD, key = key0 + j;
    const uint8_t* row = key < p.n_kv ? key_k_row(p, key, token_bytes) : nullptr;
    const uint32_t off = tile_chunk<HD, SlabRows>(j, c / 8) + (c % 8) * 2;
    *reinterpret_cast<uint16_t*>(tile + off) =
        row ? reinterpret_cast<const uint16_t*>(row + head_off)[c] : uint16_t{0};
  }
}

// Stages keys [key0, key0 + 32) of KV head kvh of K (values false) or V into `tile`, by the
// block's NT threads (rows of the kernel's T). cp.async copies complete at the caller's wait;
// direct stores at once.
template <int HD, int NT, int SlabRows = 0>
__device__ __forceinline__ void stage_half(const Params& p, uint8_t* tile, int kvh, int key0,
                                           bool values) {
  if (p.vec_loads)
    stage_chunks<HD, NT, SlabRows>(p, tile, kvh, key0, values);
  else
    stage_elements<HD, NT, SlabRows>(p, tile, kvh, key0, values);
}

// The same of K into `tile` and V into the tile after it (tile + Layout<HD>::kKvTile), in
// the mma.sync blocks' layout (tile_chunk<HD, 0>); rows of T only (attention_tc_staging.cuh's
// issue_tile takes quantized rows too).
template <int HD, int NT>
__device__ __forceinline__ void stage_tile(const Params& p, uint8_t* tile, int kvh, int key0) {
  if (p.vec_loads) return stage_chunks_kv<HD, NT>(p, tile, kvh, key0);
  stage_elements<HD, NT>(p, tile, kvh, key0, false);
  stage_elements<HD, NT>(p, tile + Layout<HD>::kKvTile, kvh, key0, true);
}

}  // namespace cairn::cuda::attn::tc
