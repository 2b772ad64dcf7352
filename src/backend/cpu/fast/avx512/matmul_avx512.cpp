// Matmul kernels for AVX-512 F/BW/VL (+ FMA, F16C); compiled with those flags
// and called only when the processor has them. 16 lanes per accumulator; a
// register tile of 4 x rows × 4 w rows (16 accumulators of 32 zmm).
#include <immintrin.h>

#include "backend/cpu/fast/kernels.h"
#include "backend/cpu/fast/matmul_tiles.h"
#include "backend/cpu/fast/vec_common.h"

namespace cairn::ops::fast {
namespace {

struct VecAvx512 {
  using T = __m512;
  static constexpr int kLanes = 16, kRows = 4, kCols = 4;
  static __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static T zero() { return _mm512_setzero_ps(); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static T load_partial(const float* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static T widen(__m256i h, DType wt) {
    if (wt == DType::kBF16)
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
  }
  template <DType WT>
  static T load_w(const void* base, int64_t offset) {
    if constexpr (WT == DType::kF32) {
      return _mm512_loadu_ps(static_cast<const float*>(base) + offset);
    } else {
      const auto* p = static_cast<const uint16_t*>(base) + offset;
      return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), WT);
    }
  }
  template <DType WT>
  static T load_w_partial(const void* base, int64_t offset, int n) {
    if constexpr (WT == DType::kF32) {
      return load_partial(static_cast<const float*>(base) + offset, n);
    } else {
      const auto* p = static_cast<const uint16_t*>(base) + offset;
      return widen(_mm256_maskz_loadu_epi16(mask(n), p), WT);
    }
  }
  template <DType WT>
  static float scalar_w(const void* base, int64_t offset) {
    return element_f32<WT>(base, offset);
  }
  static T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  // (l + l+8), (l + l+4), (l + l+2), (0 + 1): the halving order of kernels.h.
  static float hsum(T v) {
    const __m256 s8 =
        _mm256_add_ps(_mm512_castps512_ps256(v),
                      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
  }
};

}  // namespace

void matmul_cols_avx512(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch) {
  matmul_cols_any<VecAvx512>(a, j_begin, j_end, scratch);
}

}  // namespace cairn::ops::fast
