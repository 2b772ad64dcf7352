// Row kernels written once over a vector traits class V (see matmul_tiles.h
// for the traits) and instantiated by each per-ISA file through
// make_row_kernels<V>(). Internal linkage throughout.
//
// exp: x = n ln2 + r with |r| ≤ ln2/2, e^r by its degree-7 Taylor polynomial
// (truncation < 1e-8 relative), times 2^n; inputs below -87.3 give 0 and
// above 88.3 saturate. tanh: 1 - 2 / (e^{2|x|} + 1) for |x| ≥ 0.5, an odd
// Taylor polynomial to x^17 below (< 1e-8 relative). Both ≈ 1e-7 relative.
#pragma once

#include "backend/cpu/fast/kernels.h"

namespace cairn::ops::fast {
namespace {

template <class V>
typename V::T vexp(typename V::T x) {
  using T = typename V::T;
  const T xc = V::min(V::max(x, V::set1(-87.3f)), V::set1(88.3f));
  const T n = V::round(V::mul(xc, V::set1(1.44269504088896341f)));
  T r = V::fma(n, V::set1(-0.693145751953125f), xc);  // ln2 split in two: exact n * hi
  r = V::fma(n, V::set1(-1.428606765330187045e-06f), r);
  T p = V::set1(1.0f / 5040);
  p = V::fma(p, r, V::set1(1.0f / 720));
  p = V::fma(p, r, V::set1(1.0f / 120));
  p = V::fma(p, r, V::set1(1.0f / 24));
  p = V::fma(p, r, V::set1(1.0f / 6));
  p = V::fma(p, r, V::set1(0.5f));
  p = V::fma(p, r, V::set1(1.0f));
  p = V::fma(p, r, V::set1(1.0f));
  return V::select_lt(x, V::set1(-87.3f), V::zero(), V::mul(p, V::pow2(n)));
}

template <class V>
typename V::T vtanh(typename V::T x) {
  using T = typename V::T;
  const T a = V::abs(x);
  const T e = vexp<V>(V::add(a, a));
  const T big = V::sub(V::set1(1.0f), V::div(V::set1(2.0f), V::add(e, V::set1(1.0f))));
  // Taylor coefficients of tanh: x - x³/3 + 2x⁵/15 - 17x⁷/315 + ...
  static constexpr float kC[] = {6404582.0f / 10854718875.0f,
                                 -929569.0f / 638512875.0f,
                                 21844.0f / 6081075.0f,
                                 -1382.0f / 155925.0f,
                                 62.0f / 2835.0f,
                                 -17.0f / 315.0f,
                                 2.0f / 15.0f,
                                 -1.0f / 3.0f};
  const T a2 = V::mul(a, a);
  T p = V::set1(kC[0]);
  for (int i = 1; i < 8; ++i) p = V::fma(p, a2, V::set1(kC[i]));
  const T small = V::fma(V::mul(p, a2), a, a);
  return V::copysign(V::select_lt(a, V::set1(0.5f), small, big), x);
}

// Applies f to every full vector and to the zero-padded tail of x.
template <class V, class F>
void map_rows(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) V::store(y + i, f(V::load(x + i), i));
  if (i < n) V::store_partial(y + i, f(V::load_partial(x + i, int(n - i)), i), int(n - i));
}

template <class V, DType WT>
float dot_t(const float* x, const void* w, int64_t n) {
  typename V::T acc = V::zero();
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes)
    acc = V::fma(V::load(x + i), V::template load_w<WT>(w, i), acc);
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    acc = V::fma(V::load_partial(x + i, rest), V::template load_w_partial<WT>(w, i, rest), acc);
  }
  return V::hsum(acc);
}

template <class V>
float dot(const float* x, const void* w, DType wt, int64_t n) {
  if (wt == DType::kBF16) return dot_t<V, DType::kBF16>(x, w, n);
  if (wt == DType::kF16) return dot_t<V, DType::kF16>(x, w, n);
  return dot_t<V, DType::kF32>(x, w, n);
}

template <class V, DType WT>
void axpy_t(float a, const void* v, float* y, int64_t n) {
  const typename V::T av = V::set1(a);
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes)
    V::store(y + i, V::fma(av, V::template load_w<WT>(v, i), V::load(y + i)));
  for (; i < n; ++i) y[i] = __builtin_fmaf(a, V::template scalar_w<WT>(v, i), y[i]);
}

template <class V>
void axpy(float a, const void* v, DType vt, float* y, int64_t n) {
  if (vt == DType::kBF16) return axpy_t<V, DType::kBF16>(a, v, y, n);
  if (vt == DType::kF16) return axpy_t<V, DType::kF16>(a, v, y, n);
  axpy_t<V, DType::kF32>(a, v, y, n);
}

template <class V>
void scale(const float* x, float s, float* y, int64_t n) {
  map_rows<V>(x, y, n, [&](typename V::T v, int64_t) { return V::mul(v, V::set1(s)); });
}

template <class V>
void sub(const float* x, float s, float* y, int64_t n) {
  map_rows<V>(x, y, n, [&](typename V::T v, int64_t) { return V::sub(v, V::set1(s)); });
}

template <class V>
void add(const float* a, const float* b, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes)
    V::store(y + i, V::add(V::load(a + i), V::load(b + i)));
  for (; i < n; ++i) y[i] = a[i] + b[i];
}

template <class V>
float sum(const float* x, int64_t n) {
  typename V::T acc = V::zero();
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) acc = V::add(acc, V::load(x + i));
  if (i < n) acc = V::add(acc, V::load_partial(x + i, static_cast<int>(n - i)));
  return V::hsum(acc);
}

template <class V>
float sum_sq_diff(const float* x, float c, int64_t n) {
  const typename V::T cv = V::set1(c);
  typename V::T acc = V::zero();
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    const typename V::T d = V::sub(V::load(x + i), cv);
    acc = V::fma(d, d, acc);
  }
  if (i < n) {  // padding lanes hold 0 - 0
    float cs[V::kLanes];
    for (int l = 0; l < V::kLanes; ++l) cs[l] = c;
    const int rest = static_cast<int>(n - i);
    const typename V::T d = V::sub(V::load_partial(x + i, rest), V::load_partial(cs, rest));
    acc = V::fma(d, d, acc);
  }
  return V::hsum(acc);
}

template <class V>
float max(const float* x, int64_t n) {
  float m = -__builtin_inff();
  int64_t i = 0;
  if (n >= V::kLanes) {
    typename V::T acc = V::load(x);
    for (i = V::kLanes; i + V::kLanes <= n; i += V::kLanes) acc = V::max(acc, V::load(x + i));
    m = V::hmax(acc);
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

template <class V>
void normalize(const float* x, float mean, float inv, const float* w, const float* b, float* y,
               int64_t n) {
  const typename V::T mv = V::set1(mean), iv = V::set1(inv);
  map_rows<V>(x, y, n, [&](typename V::T v, int64_t i) {
    const int rest = n - i < V::kLanes ? static_cast<int>(n - i) : V::kLanes;
    typename V::T r = V::mul(V::mul(V::sub(v, mv), iv), V::load_partial(w + i, rest));
    return b ? V::add(r, V::load_partial(b + i, rest)) : r;
  });
}

template <class V>
float exp_sum(const float* x, float shift, float* y, int64_t n) {
  const typename V::T sv = V::set1(shift);
  typename V::T acc = V::zero();
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    const typename V::T e = vexp<V>(V::sub(V::load(x + i), sv));
    V::store(y + i, e);
    acc = V::add(acc, e);
  }
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    V::store_partial(y + i, vexp<V>(V::sub(V::load_partial(x + i, rest), sv)), rest);
    acc = V::add(acc, V::load_partial(y + i, rest));  // padding lanes add zeros
  }
  return V::hsum(acc);
}

// silu(g) = g / (1 + e^-g); gelu_tanh(g) = g / (1 + e^{-2u}), u = √(2/π)(g + 0.044715 g³),
// which equals 0.5 g (1 + tanh u) without its cancellation.
template <class V>
void gated(const float* g, const float* u, Activation act, float* y, int64_t n) {
  using T = typename V::T;
  map_rows<V>(g, y, n, [&](T gv, int64_t i) {
    const int rest = n - i < V::kLanes ? static_cast<int>(n - i) : V::kLanes;
    T z = gv;
    if (act == Activation::kGeluTanh) {
      const T inner = V::fma(V::mul(V::set1(0.044715f), gv), V::mul(gv, gv), gv);
      z = V::mul(V::set1(2.0f * 0.7978845608028654f), inner);
    }
    const T den = V::add(V::set1(1.0f), vexp<V>(V::sub(V::zero(), z)));
    return V::mul(V::div(gv, den), V::load_partial(u + i, rest));
  });
}

template <class V>
void softcap(float* x, float cap, int64_t n) {
  const typename V::T cv = V::set1(cap);
  map_rows<V>(x, x, n,
              [&](typename V::T v, int64_t) { return V::mul(cv, vtanh<V>(V::div(v, cv))); });
}

template <class V, DType ST, DType DT>
void convert_t(const void* src, void* dst, int64_t n) {
  constexpr int L = V::kLanes;
  const int64_t ss = ST == DType::kF32 ? 4 : 2, ds = DT == DType::kF32 ? 4 : 2;
  int64_t i = 0;
  for (; i + L <= n; i += L) V::template store_w<DT>(dst, i, V::template load_w<ST>(src, i));
  if (i == n) return;
  alignas(64) unsigned char in[L * 4] = {}, out[L * 4];
  __builtin_memcpy(in, static_cast<const unsigned char*>(src) + i * ss, (n - i) * ss);
  V::template store_w<DT>(out, 0, V::template load_w<ST>(in, 0));
  __builtin_memcpy(static_cast<unsigned char*>(dst) + i * ds, out, (n - i) * ds);
}

template <class V, DType ST>
void convert_from(const void* src, void* dst, DType dt, int64_t n) {
  if (dt == DType::kBF16) return convert_t<V, ST, DType::kBF16>(src, dst, n);
  if (dt == DType::kF16) return convert_t<V, ST, DType::kF16>(src, dst, n);
  convert_t<V, ST, DType::kF32>(src, dst, n);
}

template <class V>
void convert(const void* src, DType st, void* dst, DType dt, int64_t n) {
  if (st == DType::kBF16) return convert_from<V, DType::kBF16>(src, dst, dt, n);
  if (st == DType::kF16) return convert_from<V, DType::kF16>(src, dst, dt, n);
  convert_from<V, DType::kF32>(src, dst, dt, n);
}

template <class V>
void rotate(float* a, float* b, const float* c, const float* s, int64_t n) {
  int64_t i = 0;
  for (; i < n; i += V::kLanes) {
    const int rest = n - i < V::kLanes ? static_cast<int>(n - i) : V::kLanes;
    const typename V::T av = V::load_partial(a + i, rest), bv = V::load_partial(b + i, rest);
    const typename V::T cv = V::load_partial(c + i, rest), sv = V::load_partial(s + i, rest);
    V::store_partial(a + i, V::sub(V::mul(av, cv), V::mul(bv, sv)), rest);
    V::store_partial(b + i, V::add(V::mul(bv, cv), V::mul(av, sv)), rest);
  }
}

template <class V>
void rotate_pairs(float* x, const float* c, const float* s, int64_t n_pairs) {
  for (int64_t i = 0; i < n_pairs; ++i) {
    const float a = x[2 * i], b = x[2 * i + 1];
    x[2 * i] = a * c[i] - b * s[i];
    x[2 * i + 1] = b * c[i] + a * s[i];
  }
}

template <class V>
RowKernels make_row_kernels() {
  RowKernels k;
  k.dot = dot<V>;
  k.axpy = axpy<V>;
  k.scale = scale<V>;
  k.add = add<V>;
  k.sub = sub<V>;
  k.sum = sum<V>;
  k.sum_sq_diff = sum_sq_diff<V>;
  k.max = max<V>;
  k.normalize = normalize<V>;
  k.exp_sum = exp_sum<V>;
  k.gated = gated<V>;
  k.softcap = softcap<V>;
  k.convert = convert<V>;
  k.rotate = rotate<V>;
  k.rotate_pairs = rotate_pairs<V>;
  return k;
}

}  // namespace
}  // namespace cairn::ops::fast
