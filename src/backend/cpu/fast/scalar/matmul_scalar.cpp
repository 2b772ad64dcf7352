// Portable kernels that emulate the vector kernels lane by lane: 8 lanes (the
// AVX2 order, used on processors without AVX2) and 16 lanes (the AVX-512
// order, for tests). std::fma rounds once, exactly like a vector FMA, so these
// give the vector kernels' results bit for bit.
#include <cmath>

#include "backend/cpu/fast/kernels.h"
#include "backend/cpu/fast/matmul_tiles.h"
#include "backend/cpu/fast/vec_common.h"

namespace cairn::ops::fast {
namespace {

template <int kL, int kR, int kC>
struct VecScalar {
  struct T {
    float v[kL];
  };
  static constexpr int kLanes = kL, kRows = kR, kCols = kC;
  static T zero() { return T{}; }
  static T load(const float* p) {
    T t;
    for (int i = 0; i < kL; ++i) t.v[i] = p[i];
    return t;
  }
  static T load_partial(const float* p, int n) {
    T t{};
    for (int i = 0; i < n; ++i) t.v[i] = p[i];
    return t;
  }
  template <DType WT>
  static T load_w(const void* base, int64_t offset) {
    T t;
    for (int i = 0; i < kL; ++i) t.v[i] = element_f32<WT>(base, offset + i);
    return t;
  }
  template <DType WT>
  static T load_w_partial(const void* base, int64_t offset, int n) {
    T t{};
    for (int i = 0; i < n; ++i) t.v[i] = element_f32<WT>(base, offset + i);
    return t;
  }
  template <DType WT>
  static float scalar_w(const void* base, int64_t offset) {
    return element_f32<WT>(base, offset);
  }
  static T fma(const T& a, const T& b, const T& c) {
    T t;
    for (int i = 0; i < kL; ++i) t.v[i] = std::fma(a.v[i], b.v[i], c.v[i]);
    return t;
  }
  static void store(float* p, const T& t) {
    for (int i = 0; i < kL; ++i) p[i] = t.v[i];
  }
  static float hsum(T t) {
    for (int half = kL / 2; half >= 1; half /= 2)
      for (int i = 0; i < half; ++i) t.v[i] = t.v[i] + t.v[i + half];
    return t.v[0];
  }
};

}  // namespace

void matmul_cols_scalar(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch) {
  matmul_cols_any<VecScalar<8, 2, 4>>(a, j_begin, j_end, scratch);
}

void matmul_cols_scalar16(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch) {
  matmul_cols_any<VecScalar<16, 2, 4>>(a, j_begin, j_end, scratch);
}

}  // namespace cairn::ops::fast
