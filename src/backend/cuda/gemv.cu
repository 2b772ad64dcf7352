#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/gemv.h"

namespace cairn::cuda {
namespace {

constexpr int kWarps = 8;  // weight rows per block
constexpr int kUnroll =
    4;  // 16-byte weight loads in flight per lane (8 measured slower on an H200)

// V elements of W: one 16-byte load when V · sizeof(W) == 16, else one element.
template <typename W, int V>
using Raw = std::conditional_t<V * sizeof(W) == 16, uint4, W>;

__device__ inline void widen(const uint4& u, const __nv_bfloat16*, float* f) {
  const auto* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 t = __bfloat1622float2(h[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}
__device__ inline void widen(const uint4& u, const __half*, float* f) {
  const auto* h = reinterpret_cast<const __half2*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 t = __half22float2(h[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}
__device__ inline void widen(const uint4& u, const float*, float* f) {
  f[0] = __uint_as_float(u.x);
  f[1] = __uint_as_float(u.y);
  f[2] = __uint_as_float(u.z);
  f[3] = __uint_as_float(u.w);
}
__device__ inline void widen(__nv_bfloat16 v, const __nv_bfloat16*, float* f) {
  f[0] = __bfloat162float(v);
}
__device__ inline void widen(__half v, const __half*, float* f) {
  f[0] = __half2float(v);
}
__device__ inline void widen(float v, const float*, float* f) {
  f[0] = v;
}

// x[c·V .. c·V + V) of one row: float4 loads when V is a multiple of 4.
template <int V>
__device__ inline void load_x(const float* __restrict__ xr, int64_t c, float* f) {
  if constexpr (V % 4 == 0) {
#pragma unroll
    for (int i = 0; i < V / 4; ++i) {
      float4 t = __ldg(reinterpret_cast<const float4*>(xr + c * V) + i);
      f[4 * i] = t.x;
      f[4 * i + 1] = t.y;
      f[4 * i + 2] = t.z;
      f[4 * i + 3] = t.w;
    }
  } else {
    f[0] = __ldg(xr + c);
  }
}

// Sum over the warp by butterfly: every lane ends with the same bits (a + b == b + a).
__device__ inline float warp_sum(float v) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// w [m, k]; x [NR, k] and y [NR, m] are the block's row group (blockIdx.y); bias [m] or null.
// Lane l of the warp of weight row j multiplies k-vectors c = l, l + 32, l + 64, … in
// increasing c, elements in order, one fmaf chain per row of x.
template <typename W, int V, int NR>
__global__ void __launch_bounds__(kWarps * 32)
    gemv_kernel(const W* __restrict__ w, const float* __restrict__ x,
                const float* __restrict__ bias, float* __restrict__ y, int64_t m, int64_t k) {
  const int lane = threadIdx.x % 32;
  const int64_t j = int64_t{blockIdx.x} * kWarps + threadIdx.x / 32;
  if (j >= m) return;
  x += int64_t{blockIdx.y} * NR * k;
  y += int64_t{blockIdx.y} * NR * m;
  const Raw<W, V>* wr = reinterpret_cast<const Raw<W, V>*>(w + j * k);
  const int64_t chunks = k / V;
  float acc[NR] = {};
  for (int64_t c0 = lane; c0 < chunks; c0 += 32 * kUnroll) {
    Raw<W, V> raw[kUnroll] = {};
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (c0 + 32 * u < chunks) raw[u] = __ldg(wr + c0 + 32 * u);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t c = c0 + 32 * u;
      if (c >= chunks) break;
      float wf[V], xf[V];
      widen(raw[u], static_cast<const W*>(nullptr), wf);
#pragma unroll
      for (int r = 0; r < NR; ++r) {
        load_x<V>(x + r * k, c, xf);
#pragma unroll
        for (int e = 0; e < V; ++e) acc[r] = fmaf(wf[e], xf[e], acc[r]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < NR; ++r) {
    const float s = warp_sum(acc[r]);
    if (lane == 0) y[r * m + j] = bias ? s + bias[j] : s;
  }
}

struct Args {
  const float* x;
  const float* bias;
  float* y;
  int64_t m, k;
};

template <typename W, int V, int NR>
void launch(const W* w, const Args& a, unsigned groups) {
  const dim3 grid(static_cast<unsigned>((a.m + kWarps - 1) / kWarps), groups);
  gemv_kernel<W, V, NR><<<grid, kWarps * 32, 0, stream()>>>(w, a.x, a.bias, a.y, a.m, a.k);
  check_launch("gemv_kernel");
}

// One launch for `nr` (1..7) rows of x.
template <typename W, int V>
void launch_rest(const W* w, const Args& a, int nr) {
  switch (nr) {
    case 1:
      return launch<W, V, 1>(w, a, 1);
    case 2:
      return launch<W, V, 2>(w, a, 1);
    case 3:
      return launch<W, V, 3>(w, a, 1);
    case 4:
      return launch<W, V, 4>(w, a, 1);
    case 5:
      return launch<W, V, 5>(w, a, 1);
    case 6:
      return launch<W, V, 6>(w, a, 1);
    default:
      return launch<W, V, 7>(w, a, 1);
  }
}

// Groups of kGemvMaxRows rows of x (at most 65535 groups a launch), then the rest.
template <typename W, int V>
void launch_rows(const W* w, Args a, int64_t n) {
  int64_t groups = n / kGemvMaxRows;
  while (groups > 0) {
    const int64_t g = std::min<int64_t>(groups, 65535);
    launch<W, V, kGemvMaxRows>(w, a, static_cast<unsigned>(g));
    a.x += g * kGemvMaxRows * a.k;
    a.y += g * kGemvMaxRows * a.m;
    groups -= g;
  }
  if (n % kGemvMaxRows) launch_rest<W, V>(w, a, static_cast<int>(n % kGemvMaxRows));
}

template <typename W>
void gemv_typed(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y) {
  constexpr int kVec = 16 / sizeof(W);
  const Args a{x.data<float>(), bias ? bias->data<float>() : nullptr, y.data<float>(), w.dim(0),
               w.dim(1)};
  const bool aligned = reinterpret_cast<uintptr_t>(w.raw()) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(x.raw()) % 16 == 0 && a.k % kVec == 0;
  if (aligned)
    launch_rows<W, kVec>(w.data<W>(), a, x.dim(0));
  else
    launch_rows<W, 1>(w.data<W>(), a, x.dim(0));
}

}  // namespace

void gemv(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y) {
  if (x.dim(0) == 0 || w.dim(0) == 0) return;
  switch (w.dtype()) {
    case DType::kBF16:
      return gemv_typed<__nv_bfloat16>(x, w, bias, y);
    case DType::kF16:
      return gemv_typed<__half>(x, w, bias, y);
    default:
      return gemv_typed<float>(x, w, bias, y);
  }
}

}  // namespace cairn::cuda
