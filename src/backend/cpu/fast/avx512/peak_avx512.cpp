// The peak FMA loop for AVX-512 (see kernels.h).
#include <immintrin.h>

#include "backend/cpu/fast/kernels.h"

namespace cairn::ops::fast {

double fma_peak_avx512(int64_t iters) {
  constexpr int kChains = 10;
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  }
  float sink[16];
  __m512 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, acc[c]);
  _mm512_storeu_ps(sink, s);
  __asm__ volatile("" : : "r"(sink) : "memory");
  return 2.0 * 16 * kChains * static_cast<double>(iters);
}

}  // namespace cairn::ops::fast
