// quantize_rows: one thread per group of one head row, over every row block of the call (a
// table of (src, dst, head rows, first group) in the kernel's parameters up to 256 blocks, else
// uploaded; found as in convert_rows.cu). A thread encodes its group exactly as the CPU does
// (ops.h, KvRowQuant): the f16 roundings toward −∞ and +∞ go through float_load.cuh's bit-exact
// conversion, the division is IEEE, the rounding of a code is half-to-even (lrint's), so the bytes
// equal the CPU backend's. 4-bit codes: a thread owns whole bytes (groups are ≥ 32 elements).
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

// Group g of the head row at x (f32) into the encoded row at dst.
__device__ void encode_group(const float* x, uint8_t* dst, int g, const Layout& l) {
  const float* xg = x + g * l.group_size;
  float lo = xg[0], hi = xg[0];
  for (int i = 1; i < l.group_size; ++i) lo = fminf(lo, xg[i]), hi = fmaxf(hi, xg[i]);
  const uint16_t b16 = f16_at_most(lo);
  const float b = f16_bits_to_f32(b16);
  const int qmax = (1 << l.bits) - 1;
  const uint16_t s16 = f16_at_least(__fdiv_rn(__fsub_rn(hi, b), static_cast<float>(qmax)));
  const float s = f16_bits_to_f32(s16);
  auto* scales = reinterpret_cast<uint16_t*>(dst + l.head_dim * l.bits / 8);
  scales[g] = s16;
  scales[l.n_groups + g] = b16;
  for (int i = 0; i < l.group_size; i += 2) {
    int q[2];
    for (int e = 0; e < 2; ++e) {
      const int c = s > 0.0f ? __float2int_rn(__fdiv_rn(__fsub_rn(xg[i + e], b), s)) : 0;
      q[e] = c < 0 ? 0 : (c > qmax ? qmax : c);
    }
    const int elem = g * l.group_size + i;
    if (l.bits == 8) {
      dst[elem] = static_cast<uint8_t>(q[0]);
      dst[elem + 1] = static_cast<uint8_t>(q[1]);
    } else {
      dst[elem / 2] = static_cast<uint8_t>(q[0] | (q[1] << 4));
    }
  }
}

__global__ void quantize_rows_kernel(const __grid_constant__ QuantTable table, int n_entries,
                                     Layout l, int64_t total) {
  pdl_enter();
  const int64_t gid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (gid >= total) return;
  const QuantEntry& e = entry_at<&QuantEntry::group_begin>(table.entries(), n_entries, gid, total);
  const int64_t local = gid - e.group_begin, head_row = local / l.n_groups;
  encode_group(e.src + head_row * l.head_dim, e.dst + head_row * l.row_bytes,
               static_cast<int>(local - head_row * l.n_groups), l);
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
  launch_kernel("quantize_rows_kernel", quantize_rows_kernel, blocks_for(total), kBlock, 0, table,
                static_cast<int>(entries.size()), l, total);
}

}  // namespace cairn::cuda
