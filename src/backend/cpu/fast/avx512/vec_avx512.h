// The AVX-512 F/BW/VL vector traits used by matmul_tiles.h and row_kernels.h.
// Included only by files compiled with those flags; internal linkage.
#pragma once

#include <immintrin.h>

#include "backend/cpu/fast/vec_common.h"

namespace cairn::ops::fast {
namespace {

struct VecAvx512 {
  using T = __m512;
  static constexpr int kLanes = 16, kRows = 4, kCols = 4;
  static __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static T zero() { return _mm512_setzero_ps(); }
  static T set1(float v) { return _mm512_set1_ps(v); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static T load_partial(const float* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static void store_partial(float* p, T v, int n) { _mm512_mask_storeu_ps(p, mask(n), v); }
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
  // f32 to bf16 (nearest even; NaN stays a quiet NaN) or f16 (nearest even).
  template <DType WT>
  static void store_w(void* base, int64_t offset, T v) {
    if constexpr (WT == DType::kF32) {
      _mm512_storeu_ps(static_cast<float*>(base) + offset, v);
    } else {
      __m256i h;
      if constexpr (WT == DType::kF16) {
        h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      } else {
        const __m512i u = _mm512_castps_si512(v);
        const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
        __m512i r = _mm512_srli_epi32(
            _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
        const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
        r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), quiet);
        h = _mm512_cvtepi32_epi16(r);
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<uint16_t*>(base) + offset), h);
    }
  }
  static T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T div(T a, T b) { return _mm512_div_ps(a, b); }
  static T min(T a, T b) { return _mm512_min_ps(a, b); }
  static T max(T a, T b) { return _mm512_max_ps(a, b); }
  static T abs(T a) { return _mm512_abs_ps(a); }
  static T copysign(T mag, T sign) {
    const __m512i s = _mm512_set1_epi32(static_cast<int>(0x80000000u));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_andnot_si512(s, _mm512_castps_si512(mag)),
                                               _mm512_and_si512(s, _mm512_castps_si512(sign))));
  }
  static T round(T a) {
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static T pow2(T n) {
    const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
  }
  static T select_lt(T a, T b, T x, T y) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), y, x);
  }
  // (l + l+8), (l + l+4), (l + l+2), (0 + 1): the halving order of kernels.h.
  static float hsum(T v) {
    const __m256 s8 =
        _mm256_add_ps(_mm512_castps512_ps256(v),
                      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
  }
  static float hmax(T v) { return _mm512_reduce_max_ps(v); }
};

}  // namespace
}  // namespace cairn::ops::fast
