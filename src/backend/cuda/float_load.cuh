// Device-side loads and stores of f32/bf16/f16 elements as f32. The 16-bit
// conversions are bit for bit those of core/dtype.h (round to nearest even,
// the same NaN and overflow results), so a device tensor converts to exactly
// the bytes the CPU backend would write; hardware conversions differ on NaNs.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace cairn::cuda {

__device__ __forceinline__ float bf16_bits_to_f32(uint16_t h) {
  return __uint_as_float(static_cast<uint32_t>(h) << 16);
}

__device__ __forceinline__ uint16_t f32_to_bf16_bits(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

__device__ __forceinline__ float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return __uint_as_float(sign | 0x7f800000u | (man << 13));
  if (exp != 0) return __uint_as_float(sign | ((exp + 112) << 23) | (man << 13));
  const float v = static_cast<float>(man) * 5.9604644775390625e-8f;  // man * 2^-24, exact
  return sign ? -v : v;
}

__device__ __forceinline__ uint16_t f32_to_f16_bits(float f) {
  const uint32_t u = __float_as_uint(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds past 65504: inf
  if (abs < 0x38800000u) {                        // f16 subnormal or zero
    if (abs < 0x33000000u) return sign;
    const uint32_t shift = 126 - (abs >> 23);
    const uint32_t man = (abs & 0x7fffffu) | 0x800000u;
    uint32_t half = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return sign | static_cast<uint16_t>(half);
  }
  uint32_t r = abs - 0x38000000u;  // rebias the exponent 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);
  return sign | static_cast<uint16_t>(r >> 13);
}

// Element i of a contiguous buffer of kDType, as f32 (exact).
template <DType kDType>
__device__ __forceinline__ float load_f32(const void* p, int64_t i) {
  if constexpr (kDType == DType::kF32) return static_cast<const float*>(p)[i];
  if constexpr (kDType == DType::kBF16) return bf16_bits_to_f32(static_cast<const uint16_t*>(p)[i]);
  if constexpr (kDType == DType::kF16) return f16_bits_to_f32(static_cast<const uint16_t*>(p)[i]);
  return 0.0f;
}

// Stores v into element i of a contiguous buffer of kDType (round to nearest even).
template <DType kDType>
__device__ __forceinline__ void store_f32(void* p, int64_t i, float v) {
  if constexpr (kDType == DType::kF32) static_cast<float*>(p)[i] = v;
  if constexpr (kDType == DType::kBF16) static_cast<uint16_t*>(p)[i] = f32_to_bf16_bits(v);
  if constexpr (kDType == DType::kF16) static_cast<uint16_t*>(p)[i] = f32_to_f16_bits(v);
}

// True when p may be read as float4 (16-byte aligned).
__host__ __device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// Group g of a row of d f32: elements 4g .. 4g+3 into v, zeros past d. `vec`
// (row 16-byte aligned and d % 4 == 0, the same for every group of the row)
// reads them as one float4; either way v holds the same values, so the choice
// never changes a result.
__device__ __forceinline__ void load_group4(const float* row, int64_t g, int64_t d, bool vec,
                                            float v[4]) {
  if (vec) {
    const float4 q = reinterpret_cast<const float4*>(row)[g];
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
    return;
  }
  for (int j = 0; j < 4; ++j) v[j] = 4 * g + j < d ? row[4 * g + j] : 0.0f;
}

// Stores v into group g of a row of d f32 (elements past d are not written).
__device__ __forceinline__ void store_group4(float* row, int64_t g, int64_t d, bool vec,
                                             const float v[4]) {
  if (vec) {
    reinterpret_cast<float4*>(row)[g] = make_float4(v[0], v[1], v[2], v[3]);
    return;
  }
  for (int j = 0; j < 4; ++j)
    if (4 * g + j < d) row[4 * g + j] = v[j];
}

}  // namespace cairn::cuda
