// Element types and their conversions. bf16/f16 are stored as uint16_t bit
// patterns; conversions round to nearest even, as PyTorch and CUDA do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace cairn {

enum class DType : uint8_t {
  kF32,
  kBF16,
  kF16,
  kI8,
  kU8,
  kI32,
  kQ8,  // affine 8-bit, one u8 per element; scales and biases live beside (QuantSpec)
  kQ4,  // affine 4-bit, two elements per byte (low nibble first)
};

// Bits per element (4 for kQ4); bytes of n elements is (n * bits + 7) / 8.
int dtype_bits(DType t);
size_t dtype_bytes(DType t, size_t n_elements);
std::string_view dtype_name(DType t);
bool dtype_from_name(std::string_view name, DType* out);
bool dtype_is_float(DType t);

inline float bf16_to_f32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);

}  // namespace cairn
