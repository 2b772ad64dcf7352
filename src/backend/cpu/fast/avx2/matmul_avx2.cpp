// Matmul kernels for AVX2 + FMA + F16C (this file is compiled with those flags
// and called only when the processor has them). 8 lanes per accumulator; a
// register tile of 3 x rows × 4 w rows (12 accumulators + 3 x + 1 w = 16 ymm).
#include <immintrin.h>

#include "backend/cpu/fast/kernels.h"
#include "backend/cpu/fast/matmul_tiles.h"
#include "backend/cpu/fast/vec_common.h"

namespace cairn::ops::fast {
namespace {

struct VecAvx2 {
  using T = __m256;
  static constexpr int kLanes = 8, kRows = 3, kCols = 4;
  static T zero() { return _mm256_setzero_ps(); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static T load_partial(const float* p, int n) {
    float b[8] = {};
    for (int i = 0; i < n; ++i) b[i] = p[i];
    return _mm256_loadu_ps(b);
  }
  template <DType WT>
  static T load_w(const void* base, int64_t offset) {
    if constexpr (WT == DType::kF32) {
      return _mm256_loadu_ps(static_cast<const float*>(base) + offset);
    } else {
      const __m128i h = _mm_loadu_si128(
          reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(base) + offset));
      if constexpr (WT == DType::kBF16)
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
      else
        return _mm256_cvtph_ps(h);
    }
  }
  template <DType WT>
  static T load_w_partial(const void* base, int64_t offset, int n) {
    if constexpr (WT == DType::kF32) {
      return load_partial(static_cast<const float*>(base) + offset, n);
    } else {
      uint16_t b[8] = {};
      for (int i = 0; i < n; ++i) b[i] = static_cast<const uint16_t*>(base)[offset + i];
      return load_w<WT>(b, 0);
    }
  }
  template <DType WT>
  static float scalar_w(const void* base, int64_t offset) {
    return element_f32<WT>(base, offset);
  }
  static T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  // (l + l+4), then (l + l+2), then (0 + 1): the halving order of kernels.h.
  static float hsum(T v) {
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
  }
};

}  // namespace

void matmul_cols_avx2(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch) {
  matmul_cols_any<VecAvx2>(a, j_begin, j_end, scratch);
}

}  // namespace cairn::ops::fast
