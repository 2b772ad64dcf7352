// quantize_rows: one warp per group of one head row, over every row block of the call (a
// table of (src, dst, head rows, first group) in the kernel's parameters up to 256 blocks, else
// uploaded; found as in convert_rows.cu). A warp encodes its group exactly as the CPU does
// (core/affine_row.cpp): the group's minimum and maximum found in element order with std::min's
// and std::max's comparisons (every lane scans the whole group, shuffled from the lanes that
// loaded it, so the ties of signed zeros resolve as on the CPU), the f16 roundings toward −∞ and
// +∞ through float_load.cuh's bit-exact conversion, the division IEEE, a code's rounding
// half-to-even (lrint's); so the bytes equal the CPU backend's. Lane l holds and encodes
// elements l, l + 32, … of the group (4-bit: the even lane of a pair stores their byte).
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/entry_table.cuh"
#include "backend/cuda/float_load.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/quantize_rows.h"

namespace cairn::cuda {
namespace {

constexpr uint16_t kF16MaxFinite = 0x7bff;

// One row block: src and dst at its first row.
struct QuantEntry {
  const float* src;
  uint8_t* dst;
  int64_t groups;       // head rows × groups per head row
  int64_t group_begin;  // its first group over the call
};

// Row blocks held in the kernel's parameters (8 KiB: a decode step of up to 128 sequences, K
// and V each), so that the KV append of a quantized cache queues no copy (entry_table.cuh).
constexpr int kHeldBlocks = 256;
using QuantTable = EntryTable<QuantEntry, kHeldBlocks>;

struct Layout {
  int head_dim, group_size, bits, n_groups;  // n_groups per head row
  int64_t row_bytes;
};

// Largest f16 ≤ x (x finite), saturating at ±65504.
__device__ uint16_t f16_at_most(float x) {
  uint16_t h = f32_to_f16_bits(x);
  if ((h & 0x7fff) > kF16MaxFinite) h = static_cast<uint16_t>((h & 0x8000) | kF16MaxFinite);
  if (f16_bits_to_f32(h) <= x) return h;
  if (h == 0x0000) return 0x8001;
  if (h == 0xfbff) return h;
  return (h & 0x8000) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h - 1);
}

// Smallest f16 ≥ x for x ≥ 0, saturating at 65504.
__device__ uint16_t f16_at_least(float x) {
  uint16_t h = f32_to_f16_bits(x);
  if (h > kF16MaxFinite) return kF16MaxFinite;
  if (f16_bits_to_f32(h) >= x) return h;
  return static_cast<uint16_t>(h + 1);
}

// The group's element i = 32 j + lane of x, as lane `lane` holds it in v[j]; G: group size.
template <int G>
__device__ __forceinline__ void group_range(const float (&v)[G / 32], float& lo, float& hi) {
  lo = __shfl_sync(0xffffffffu, v[0], 0), hi = lo;
#pragma unroll
  for (int j = 0; j < G / 32; ++j)
#pragma unroll
    for (int src = 0; src < 32; ++src) {
      const float x = __shfl_sync(0xffffffffu, v[j], src);
      lo = x < lo ? x : lo;  // std::min(lo, x)
      hi = hi < x ? x : hi;  // std::max(hi, x)
    }
}

// Group g of the head row at x (f32) into the encoded row at dst, by one warp.
template <int G>
__device__ void encode_group(const float* x, uint8_t* dst, int g, const Layout& l) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const float* xg = x + g * G;
  float v[G / 32];
#pragma unroll
  for (int j = 0; j < G / 32; ++j) v[j] = xg[32 * j + lane];
  float lo, hi;
  group_range<G>(v, lo, hi);
  const uint16_t b16 = f16_at_most(lo);
  const float b = f16_bits_to_f32(b16);
  const int qmax = (1 << l.bits) - 1;
  const uint16_t s16 = f16_at_least(__fdiv_rn(__fsub_rn(hi, b), static_cast<float>(qmax)));
  const float s = f16_bits_to_f32(s16);
  if (lane == 0) {
    auto* scales = reinterpret_cast<uint16_t*>(dst + l.head_dim * l.bits / 8);
    scales[g] = s16;
    scales[l.n_groups + g] = b16;
  }
#pragma unroll
  for (int j = 0; j < G / 32; ++j) {
    const int c = s > 0.0f ? __float2int_rn(__fdiv_rn(__fsub_rn(v[j], b), s)) : 0;
    const int q = c < 0 ? 0 : (c > qmax ? qmax : c);
    const int elem = g * G + 32 * j + lane;
    if (l.bits == 8) {
      dst[elem] = static_cast<uint8_t>(q);
    } else {
      const int up = __shfl_down_sync(0xffffffffu, q, 1);  // the pair's odd element
      if (lane % 2 == 0) dst[elem / 2] = static_cast<uint8_t>(q | (up << 4));
    }
  }
}

template <int G>
__global__ void quantize_rows_kernel(const __grid_constant__ QuantTable table, int n_entries,
                                     Layout l, int64_t total) {
  pdl_enter();
  const int64_t gid = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (gid >= total) return;  // whole warps: a warp's lanes share gid
  const QuantEntry& e = entry_at<&QuantEntry::group_begin>(table.entries(), n_entries, gid, total);
  const int64_t local = gid - e.group_begin, head_row = local / l.n_groups;
  encode_group<G>(e.src + head_row * l.head_dim, e.dst + head_row * l.row_bytes,
                  static_cast<int>(local - head_row * l.n_groups), l);
}

// The kernel of group size G (32, 64 or 128: kv_format.cpp's check_affine).
template <int G>
void launch_quantize(const QuantTable& table, int n_entries, const Layout& l, int64_t total) {
  launch_kernel("quantize_rows_kernel", quantize_rows_kernel<G>, blocks_for(total * 32), kBlock, 0,
                table, n_entries, l, total);
}

}  // namespace

void quantize_rows(std::span<const ops::RowCopy> copies, const ops::KvRowQuant& q) {
  if (copies.empty()) return;
  const Tensor& first = *copies.front().src;
  Layout l{};
  l.head_dim = static_cast<int>(first.dim(-1));
  l.group_size = q.group_size, l.bits = q.bits, l.n_groups = l.head_dim / q.group_size;
  l.row_bytes = q.row_bytes(l.head_dim);
  std::vector<QuantEntry> entries;
  int64_t total = 0;
  for (const ops::RowCopy& c : copies) {
    const int64_t heads = c.src->numel() == 0 ? 0 : c.src->numel() / c.src->dim(0) / l.head_dim;
    if (c.n_rows == 0 || heads == 0) continue;
    QuantEntry e{};
    e.src = c.src->data<float>() + c.src_row * heads * l.head_dim;
    e.dst = static_cast<uint8_t*>(c.dst->raw()) + c.dst_row * heads * l.row_bytes;
    e.groups = c.n_rows * heads * l.n_groups;
    e.group_begin = total;
    total += e.groups;
    entries.push_back(e);
  }
  if (entries.empty()) return;
  const QuantTable table = entry_table<kHeldBlocks>(std::span<const QuantEntry>(entries));
  const int n = static_cast<int>(entries.size());
  if (l.group_size == 32)
    launch_quantize<32>(table, n, l, total);
  else if (l.group_size == 64)
    launch_quantize<64>(table, n, l, total);
  else if (l.group_size == 128)
    launch_quantize<128>(table, n, l, total);
  else
    throw std::invalid_argument("quantize_rows: group size " + std::to_string(l.group_size) +
                                " (32, 64 or 128)");
}

}  // namespace cairn::cuda
