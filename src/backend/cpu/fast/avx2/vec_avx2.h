// The AVX2 + FMA + F16C vector traits used by matmul_tiles.h and
// row_kernels.h. Included only by files compiled with those flags; internal
// linkage, so no copy is shared with files of another ISA.
#pragma once

#include <immintrin.h>

#include "backend/cpu/fast/vec_common.h"

namespace cairn::ops::fast {
namespace {

struct VecAvx2 {
  using T = __m256;
  static constexpr int kLanes = 8, kRows = 3, kCols = 4;
  static T zero() { return _mm256_setzero_ps(); }
  static T set1(float v) { return _mm256_set1_ps(v); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static T load_partial(const float* p, int n) {
    float b[8] = {};
    for (int i = 0; i < n; ++i) b[i] = p[i];
    return _mm256_loadu_ps(b);
  }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static void store_partial(float* p, T v, int n) {
    float b[8];
    _mm256_storeu_ps(b, v);
    for (int i = 0; i < n; ++i) p[i] = b[i];
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
  // f32 to bf16 (nearest even; NaN stays a quiet NaN) or f16 (F16C, nearest even).
  template <DType WT>
  static void store_w(void* base, int64_t offset, T v) {
    if constexpr (WT == DType::kF32) {
      _mm256_storeu_ps(static_cast<float*>(base) + offset, v);
    } else {
      __m128i h;
      if constexpr (WT == DType::kF16) {
        h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      } else {
        const __m256i u = _mm256_castps_si256(v);
        const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
        const __m256i rounded = _mm256_srli_epi32(
            _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
        const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
        const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
        const __m256i r = _mm256_castps_si256(
            _mm256_blendv_ps(_mm256_castsi256_ps(rounded), _mm256_castsi256_ps(quiet), nan));
        h = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
      }
      _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<uint16_t*>(base) + offset), h);
    }
  }
  static T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static T div(T a, T b) { return _mm256_div_ps(a, b); }
  static T min(T a, T b) { return _mm256_min_ps(a, b); }
  static T max(T a, T b) { return _mm256_max_ps(a, b); }
  static T abs(T a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static T copysign(T mag, T sign) {
    const __m256 s = _mm256_set1_ps(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(s, mag), _mm256_and_ps(s, sign));
  }
  static T round(T a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // 2^n for integral n in [-126, 127].
  static T pow2(T n) {
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
  // Per lane: a < b ? x : y.
  static T select_lt(T a, T b, T x, T y) {
    return _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
  }
  // (l + l+4), then (l + l+2), then (0 + 1): the halving order of kernels.h.
  static float hsum(T v) {
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
  }
  static float hmax(T v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
  }
};

}  // namespace
}  // namespace cairn::ops::fast
