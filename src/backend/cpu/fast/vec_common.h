// Scalar element conversions for the per-ISA kernel files, with internal
// linkage so that no ISA-compiled copy is shared across files.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/dtype.h"

namespace cairn::ops::fast {
namespace {

inline float bits_to_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// IEEE half to f32, exact (same result as F16C's vcvtph2ps).
inline float half_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return bits_to_f32(sign | 0x7f800000u | (man << 13));
  if (exp != 0) return bits_to_f32(sign | ((exp + 112) << 23) | (man << 13));
  const float v = static_cast<float>(man) * 5.9604644775390625e-8f;  // subnormal: man * 2^-24
  return sign ? -v : v;
}

// Element `offset` of a WT buffer as f32.
template <DType WT>
inline float element_f32(const void* base, int64_t offset) {
  if constexpr (WT == DType::kF32) {
    return static_cast<const float*>(base)[offset];
  } else if constexpr (WT == DType::kBF16) {
    return bits_to_f32(static_cast<uint32_t>(static_cast<const uint16_t*>(base)[offset]) << 16);
  } else {
    return half_to_f32(static_cast<const uint16_t*>(base)[offset]);
  }
}

}  // namespace
}  // namespace cairn::ops::fast
