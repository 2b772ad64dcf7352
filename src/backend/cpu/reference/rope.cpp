#include <cmath>

#include "backend/cpu/reference/reference.h"

namespace cairn::ops::ref {

// The angle is the f32 product position * inv_freq[i] (as HF computes it); its
// cosine and sine are taken in double and rounded once.
void rope(Tensor& x, std::span<const int32_t> positions, const RopeParams& p) {
  const int64_t n_tokens = x.dim(0), n_heads = x.dim(1), head_dim = x.dim(2);
  const int half = p.rotary_dim / 2;
  float* xd = x.data<float>();
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int i = 0; i < half; ++i) {
      const float angle = static_cast<float>(positions[static_cast<size_t>(t)]) *
                          p.inv_freq[static_cast<size_t>(i)];
      const float c = static_cast<float>(std::cos(static_cast<double>(angle))) * p.attention_factor;
      const float s = static_cast<float>(std::sin(static_cast<double>(angle))) * p.attention_factor;
      for (int64_t h = 0; h < n_heads; ++h) {
        float* row = xd + (t * n_heads + h) * head_dim;
        const bool split = p.layout == RopeLayout::kHalfSplit;
        float& a = split ? row[i] : row[2 * i];
        float& b = split ? row[i + half] : row[2 * i + 1];
        const float a0 = a, b0 = b;
        a = a0 * c - b0 * s;
        b = b0 * c + a0 * s;
      }
    }
  }
}

}  // namespace cairn::ops::ref
