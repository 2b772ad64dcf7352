// convert_rows: one launch for every row block. Each block of the grid converts
// kPerBlock consecutive elements of one row block, found (entry_table.cuh) in an
// table of (src, dst, elements, first grid block); each element goes
// through float_load.cuh as in convert.cu, so the bytes are convert()'s.
#include <vector>

#include "backend/cuda/convert_rows.h"
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/entry_table.cuh"
#include "backend/cuda/float_load.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"

namespace cairn::cuda {
namespace {

constexpr int kPerThread = 4;
constexpr int64_t kPerBlock = int64_t{kBlock} * kPerThread;

// One row block, as the kernel sees it: src and dst at its first row.
struct CopyEntry {
  const void* src;
  void* dst;
  int64_t n;            // elements
  int64_t block_begin;  // its first grid block
};

// Copies held in the kernel's parameters (8 KiB: a decode step of up to 128 sequences, K and V
// each).
constexpr int kHeldCopies = 256;
using CopyTable = EntryTable<CopyEntry, kHeldCopies>;

template <DType kSrc, DType kDst>
__global__ void convert_rows_kernel(const __grid_constant__ CopyTable copies, int n_copies) {
  pdl_enter();
  const int64_t block = blockIdx.x;
  const CopyEntry c =
      entry_at<&CopyEntry::block_begin>(copies.entries(), n_copies, block, gridDim.x);
  const int64_t first = (block - c.block_begin) * kPerBlock;
  for (int j = 0; j < kPerThread; ++j) {
    const int64_t i = first + j * kBlock + threadIdx.x;
    if (i < c.n) store_f32<kDst>(c.dst, i, load_f32<kSrc>(c.src, i));
  }
}

template <DType kSrc>
void launch_from(DType dst_dtype, const CopyTable& table, int n, unsigned grid) {
  if (dst_dtype == DType::kF32)
    launch_kernel("convert_rows_kernel", convert_rows_kernel<kSrc, DType::kF32>, grid, kBlock, 0,
                  table, n);
  else if (dst_dtype == DType::kBF16)
    launch_kernel("convert_rows_kernel", convert_rows_kernel<kSrc, DType::kBF16>, grid, kBlock, 0,
                  table, n);
  else
    launch_kernel("convert_rows_kernel", convert_rows_kernel<kSrc, DType::kF16>, grid, kBlock, 0,
                  table, n);
}

}  // namespace

void convert_rows(std::span<const ops::RowCopy> copies) {
  std::vector<CopyEntry> entries;
  int64_t blocks = 0;
  for (const ops::RowCopy& c : copies) {
    if (c.n_rows == 0 || c.src->numel() == 0) continue;
    const int64_t row = c.src->numel() / c.src->dim(0);  // elements per row
    const size_t src_row_bytes = dtype_bytes(c.src->dtype(), static_cast<size_t>(row));
    const size_t dst_row_bytes = dtype_bytes(c.dst->dtype(), static_cast<size_t>(row));
    CopyEntry e{};
    e.src =
        static_cast<const uint8_t*>(c.src->raw()) + static_cast<size_t>(c.src_row) * src_row_bytes;
    e.dst = static_cast<uint8_t*>(c.dst->raw()) + static_cast<size_t>(c.dst_row) * dst_row_bytes;
    e.n = c.n_rows * row;
    e.block_begin = blocks;
    blocks += (e.n + kPerBlock - 1) / kPerBlock;
    entries.push_back(e);
  }
  if (entries.empty()) return;
  const CopyTable table = entry_table<kHeldCopies>(std::span<const CopyEntry>(entries));
  const int n = static_cast<int>(entries.size());
  const unsigned grid = static_cast<unsigned>(blocks);
  const DType src = copies.front().src->dtype(), dst = copies.front().dst->dtype();
  if (src == DType::kF32)
    launch_from<DType::kF32>(dst, table, n, grid);
  else if (src == DType::kBF16)
    launch_from<DType::kBF16>(dst, table, n, grid);
  else
    launch_from<DType::kF16>(dst, table, n, grid);
}

}  // namespace cairn::cuda
