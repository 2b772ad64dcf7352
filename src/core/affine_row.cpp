#include "core/affine_row.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/dtype.h"

namespace cairn {

namespace {

constexpr uint16_t kF16MaxFinite = 0x7bff;

}  // namespace

uint16_t f16_at_most(float x) {
  uint16_t h = f32_to_f16(x);
  if ((h & 0x7fff) > kF16MaxFinite) h = static_cast<uint16_t>((h & 0x8000) | kF16MaxFinite);
  if (f16_to_f32(h) <= x) return h;
  if (h == 0x0000) return 0x8001;  // +0 > x: the smallest negative subnormal
  if (h == 0xfbff) return h;       // below -65504: saturate rather than reach -inf
  return (h & 0x8000) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h - 1);
}

uint16_t f16_at_least(float x) {
  uint16_t h = f32_to_f16(x);
  if (h > kF16MaxFinite) return kF16MaxFinite;
  if (f16_to_f32(h) >= x) return h;
  return static_cast<uint16_t>(h + 1);
}

void encode_affine(const float* x, int64_t d, int bits, int gs, uint8_t* dst) {
  const int64_t n_groups = d / gs;
  uint16_t* scales = reinterpret_cast<uint16_t*>(dst + d * bits / 8);
  uint16_t* biases = scales + n_groups;
  const int qmax = (1 << bits) - 1;
  if (bits == 4) std::memset(dst, 0, static_cast<size_t>(d / 2));
  for (int64_t g = 0; g < n_groups; ++g) {
    const float* xg = x + g * gs;
    float lo = xg[0], hi = xg[0];
    for (int i = 1; i < gs; ++i) {
      lo = std::min(lo, xg[i]);
      hi = std::max(hi, xg[i]);
    }
    const uint16_t b16 = f16_at_most(lo);
    const float b = f16_to_f32(b16);
    const uint16_t s16 = f16_at_least((hi - b) / static_cast<float>(qmax));
    const float s = f16_to_f32(s16);
    scales[g] = s16;
    biases[g] = b16;
    for (int i = 0; i < gs; ++i) {
      int q = s > 0.0f ? static_cast<int>(std::lrint((xg[i] - b) / s)) : 0;
      q = q < 0 ? 0 : (q > qmax ? qmax : q);
      const int64_t e = g * gs + i;
      if (bits == 8)
        dst[e] = static_cast<uint8_t>(q);
      else
        dst[e / 2] |= static_cast<uint8_t>(q << ((e & 1) * 4));
    }
  }
}

void decode_affine(const uint8_t* src, int64_t d, int bits, int gs, float* y) {
  const int64_t n_groups = d / gs;
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(src + d * bits / 8);
  const uint16_t* biases = scales + n_groups;
  for (int64_t g = 0; g < n_groups; ++g) {
    const float s = f16_to_f32(scales[g]), b = f16_to_f32(biases[g]);
    for (int64_t e = g * gs; e < (g + 1) * gs; ++e) {
      const int q = bits == 8 ? src[e] : (src[e / 2] >> ((e & 1) * 4)) & 0xf;
      y[e] = static_cast<float>(q) * s + b;
    }
  }
}

}  // namespace cairn
