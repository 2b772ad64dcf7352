// Tensor maps for the tensor memory accelerator (tma.cuh): the driver's cuTensorMapEncodeTiled,
// found through the runtime (no link to the driver library).
#pragma once

#include <cuda.h>

#include <cstdint>

namespace cairn::cuda {

// A map of the row-major [rows, cols] matrix of 2-byte elements (bf16 when `bf16`, else f16) at
// `base` (16-byte aligned, cols a multiple of 8), in boxes of `box_rows` rows × 64 columns
// (128 bytes) laid out in the 128-byte swizzle (mma_tile.cuh's layout; wgmma's). Throws
// Error(kInternal) if the driver refuses it. Kept by its inputs (a map depends on nothing
// else), so an eager launch over the same matrices encodes none again; thread-safe.
CUtensorMap tile_map_128b(const void* base, int64_t rows, int64_t cols, int box_rows, bool bf16);
// The same, encoded now.
CUtensorMap encode_tile_map_128b(const void* base, int64_t rows, int64_t cols, int box_rows,
                                 bool bf16);

}  // namespace cairn::cuda
