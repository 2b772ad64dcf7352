// The peak loop for processors without AVX2: scalar multiply-adds.
#include "backend/cpu/fast/kernels.h"

namespace cairn::ops::fast {

double fma_peak_scalar(int64_t iters) {
  constexpr int kChains = 10;
  float acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = static_cast<float>(c);
  for (int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * 0.999999f + 1e-7f;
  float s = 0;
  for (float a : acc) s += a;
  __asm__ volatile("" : : "r"(&s) : "memory");
  return 2.0 * kChains * static_cast<double>(iters);
}

}  // namespace cairn::ops::fast
