// RoPE fast path: per token, a table of cos and sin (the same f32 angle and
// double cos/sin as the reference), then every head rotated with the row
// kernels. Tokens are split across the pool.
#include <cmath>
#include <vector>

#include "backend/cpu/fast/fast.h"
#include "core/thread_pool.h"

namespace cairn::ops::fast {

void rope(Tensor& x, std::span<const int32_t> positions, const RopeParams& p) {
  const RowKernels& k = row_kernels();
  const int64_t n_heads = x.dim(1), head_dim = x.dim(2);
  const int half = p.rotary_dim / 2;
  ThreadPool::global().parallel_for(x.dim(0), [&](int64_t b, int64_t e) {
    std::vector<float> cs(static_cast<size_t>(2 * half));
    float* c = cs.data();
    float* s = cs.data() + half;
    for (int64_t t = b; t < e; ++t) {
      const auto pos = static_cast<float>(positions[static_cast<size_t>(t)]);
      for (int i = 0; i < half; ++i) {
        const double angle = pos * p.inv_freq[static_cast<size_t>(i)];
        c[i] = static_cast<float>(std::cos(angle)) * p.attention_factor;
        s[i] = static_cast<float>(std::sin(angle)) * p.attention_factor;
      }
      for (int64_t h = 0; h < n_heads; ++h) {
        float* row = x.data<float>() + (t * n_heads + h) * head_dim;
        if (p.layout == RopeLayout::kHalfSplit)
          k.rotate(row, row + half, c, s, half);
        else
          k.rotate_pairs(row, c, s, half);
      }
    }
  });
}

}  // namespace cairn::ops::fast
