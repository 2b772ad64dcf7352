// Stores of f32 results into outputs of f32, bf16 or f16 (ops.h: a producer of a product's
// x may write it rounded). The conversions are round_input.cu's (nearest even), so a
// rounded output holds exactly the bytes round_input would make of the f32 one.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "backend/cuda/float_load.cuh"

namespace cairn::cuda {

template <typename T>
__device__ __forceinline__ T rounded(float v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(v);
  else
    return v;
}

// store_group4 (float_load.cuh) into a row of T: elements 4g .. 4g + 3 rounded, those past d
// not written; `vec` (row 16-byte aligned, d % 4 == 0) stores the group at once.
template <typename T>
__device__ __forceinline__ void store_group4_as(T* row, int64_t g, int64_t d, bool vec,
                                                const float v[4]) {
  if constexpr (std::is_same_v<T, float>) {
    store_group4(row, g, d, vec, v);
  } else if (vec) {
    T h[4] = {rounded<T>(v[0]), rounded<T>(v[1]), rounded<T>(v[2]), rounded<T>(v[3])};
    reinterpret_cast<uint2*>(row)[g] = *reinterpret_cast<const uint2*>(h);
  } else {
    for (int j = 0; j < 4; ++j)
      if (4 * g + j < d) row[4 * g + j] = rounded<T>(v[j]);
  }
}

}  // namespace cairn::cuda
