// Portable "vector" traits: kL floats in an array, each lane computed as the
// vector instructions do (__builtin_fmaf rounds once, like a vector FMA).
// Used where the processor lacks AVX2 and, in tests, to check the vector
// kernels' lane order. Internal linkage.
#pragma once

#include "backend/cpu/fast/vec_common.h"

namespace cairn::ops::fast {
namespace {

template <int kL, int kR, int kC>
struct VecScalar {
  struct T {
    float v[kL];
  };
  static constexpr int kLanes = kL, kRows = kR, kCols = kC;
  template <class F>
  static T map(F f) {
    T t;
    for (int i = 0; i < kL; ++i) t.v[i] = f(i);
    return t;
  }
  static T zero() { return T{}; }
  static T set1(float x) {
    return map([&](int) { return x; });
  }
  static T load(const float* p) {
    return map([&](int i) { return p[i]; });
  }
  static T load_partial(const float* p, int n) {
    return map([&](int i) { return i < n ? p[i] : 0.0f; });
  }
  static void store(float* p, const T& t) {
    for (int i = 0; i < kL; ++i) p[i] = t.v[i];
  }
  static void store_partial(float* p, const T& t, int n) {
    for (int i = 0; i < n; ++i) p[i] = t.v[i];
  }
  template <DType WT>
  static T load_w(const void* base, int64_t offset) {
    return map([&](int i) { return element_f32<WT>(base, offset + i); });
  }
  template <DType WT>
  static T load_w_partial(const void* base, int64_t offset, int n) {
    return map([&](int i) { return i < n ? element_f32<WT>(base, offset + i) : 0.0f; });
  }
  template <DType WT>
  static float scalar_w(const void* base, int64_t offset) {
    return element_f32<WT>(base, offset);
  }
  template <DType WT>
  static void store_w(void* base, int64_t offset, const T& t) {
    for (int i = 0; i < kL; ++i) {
      if constexpr (WT == DType::kF32)
        static_cast<float*>(base)[offset + i] = t.v[i];
      else if constexpr (WT == DType::kBF16)
        static_cast<uint16_t*>(base)[offset + i] = f32_to_bf16(t.v[i]);
      else
        static_cast<uint16_t*>(base)[offset + i] = f32_to_f16(t.v[i]);
    }
  }
  static T fma(const T& a, const T& b, const T& c) {
    return map([&](int i) { return __builtin_fmaf(a.v[i], b.v[i], c.v[i]); });
  }
  static T add(const T& a, const T& b) {
    return map([&](int i) { return a.v[i] + b.v[i]; });
  }
  static T sub(const T& a, const T& b) {
    return map([&](int i) { return a.v[i] - b.v[i]; });
  }
  static T mul(const T& a, const T& b) {
    return map([&](int i) { return a.v[i] * b.v[i]; });
  }
  static T div(const T& a, const T& b) {
    return map([&](int i) { return a.v[i] / b.v[i]; });
  }
  static T min(const T& a, const T& b) {
    return map([&](int i) { return a.v[i] < b.v[i] ? a.v[i] : b.v[i]; });
  }
  static T max(const T& a, const T& b) {
    return map([&](int i) { return a.v[i] > b.v[i] ? a.v[i] : b.v[i]; });
  }
  static T abs(const T& a) {
    return map([&](int i) { return __builtin_fabsf(a.v[i]); });
  }
  static T copysign(const T& m, const T& s) {
    return map([&](int i) { return __builtin_copysignf(m.v[i], s.v[i]); });
  }
  static T round(const T& a) {
    return map([&](int i) { return __builtin_nearbyintf(a.v[i]); });
  }
  static T pow2(const T& n) {
    return map([&](int i) {
      return bits_to_f32(static_cast<uint32_t>(static_cast<int>(n.v[i]) + 127) << 23);
    });
  }
  static T select_lt(const T& a, const T& b, const T& x, const T& y) {
    return map([&](int i) { return a.v[i] < b.v[i] ? x.v[i] : y.v[i]; });
  }
  static float hsum(T t) {
    for (int half = kL / 2; half >= 1; half /= 2)
      for (int i = 0; i < half; ++i) t.v[i] = t.v[i] + t.v[i + half];
    return t.v[0];
  }
  static float hmax(const T& t) {
    float m = t.v[0];
    for (int i = 1; i < kL; ++i) m = t.v[i] > m ? t.v[i] : m;
    return m;
  }
};

}  // namespace
}  // namespace cairn::ops::fast
