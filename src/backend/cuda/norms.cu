// RMSNorm and LayerNorm, one block per row. A row's reductions run in the
// fixed order of reduce.cuh: thread t folds groups of 4 elements t, t + T,
// t + 2T, … (T threads) in increasing order, then block_reduce; T depends on
// the row length alone, so a row's output bits never depend on the other rows. RMSNorm's y may
// be bf16/f16: the f32 result rounded as it is stored (rounded_store.cuh).
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/float_load.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/norms.h"
#include "backend/cuda/op_errors.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/reduce.cuh"
#include "backend/cuda/rounded_store.cuh"

namespace cairn::cuda {
namespace {

// Groups of 4 a thread of rms_norm_kernel holds in registers between its two passes, so
// that a row of up to kHeldGroups · T groups is read once and all its loads are in flight
// together; a longer row is read again. Either way the same values meet in the same order.
constexpr int kHeldGroups = 8;

// Σ x² of thread's groups g = t, t + T, … in increasing order (x += r first when r is given,
// written back), and those groups of x held in `held` when kHeld.
template <int kThreads, bool kHeld>
__device__ __forceinline__ float sum_squares(float* xr, const float* rr, int64_t d, bool vec,
                                             float (&held)[kHeldGroups][4]) {
  const int64_t groups = (d + 3) / 4;
  float ss = 0.0f;
  if constexpr (kHeld) {
    float add[kHeldGroups][4];
#pragma unroll
    for (int c = 0; c < kHeldGroups; ++c) {
      const int64_t g = threadIdx.x + static_cast<int64_t>(c) * kThreads;
      if (g < groups) load_group4(xr, g, d, vec, held[c]);
      if (g < groups && rr) load_group4(rr, g, d, vec, add[c]);
    }
#pragma unroll
    for (int c = 0; c < kHeldGroups; ++c) {
      const int64_t g = threadIdx.x + static_cast<int64_t>(c) * kThreads;
      if (g >= groups) continue;
      if (rr) {
        for (int j = 0; j < 4; ++j) held[c][j] = __fadd_rn(held[c][j], add[c][j]);
        store_group4(xr, g, d, vec, held[c]);
      }
      for (int j = 0; j < 4; ++j) ss = __fmaf_rn(held[c][j], held[c][j], ss);
    }
  } else {
    for (int64_t g = threadIdx.x; g < groups; g += kThreads) {
      float v[4];
      load_group4(xr, g, d, vec, v);
      if (rr) {
        float a[4];
        load_group4(rr, g, d, vec, a);
        for (int j = 0; j < 4; ++j) v[j] = __fadd_rn(v[j], a[j]);
        store_group4(xr, g, d, vec, v);
      }
      for (int j = 0; j < 4; ++j) ss = __fmaf_rn(v[j], v[j], ss);  // zeros past d add nothing
    }
  }
  return ss;
}

// x, y [n, d] (an f32 y may alias x unless r is given); w [d]. Block i normalizes row i. With
// r [n, d]: first x += r (add's arithmetic), each group written back by the thread that later
// reads it again.
// The held groups' weights are read before the kernel ahead has finished (pdl.cuh: no kernel
// writes a weight), so their loads are not on the row's critical path.
template <int kThreads, bool kHeld, typename TY>
__global__ void __launch_bounds__(kThreads)
    rms_norm_kernel(float* x, const float* r, const float* w, float eps, TY* y, int64_t d,
                    bool vec) {
  const int64_t groups = (d + 3) / 4;
  [[maybe_unused]] float wv[kHeldGroups][4];
  if constexpr (kHeld) {
#pragma unroll
    for (int c = 0; c < kHeldGroups; ++c) {
      const int64_t g = threadIdx.x + static_cast<int64_t>(c) * kThreads;
      if (g < groups) load_group4(w, g, d, vec, wv[c]);
    }
  }
  pdl_enter();
  float* xr = x + blockIdx.x * d;
  const float* rr = r ? r + blockIdx.x * d : nullptr;
  TY* yr = y + blockIdx.x * d;
  float held[kHeldGroups][4];
  float ss = sum_squares<kThreads, kHeld>(xr, rr, d, vec, held);
  ss = block_reduce<kThreads>(ss, SumOp{});
  const float inv = __frcp_rn(__fsqrt_rn(__fadd_rn(__fdiv_rn(ss, static_cast<float>(d)), eps)));
  if constexpr (kHeld) {
#pragma unroll
    for (int c = 0; c < kHeldGroups; ++c) {
      const int64_t g = threadIdx.x + static_cast<int64_t>(c) * kThreads;
      if (g >= groups) continue;
      for (int j = 0; j < 4; ++j) held[c][j] = __fmul_rn(__fmul_rn(held[c][j], inv), wv[c][j]);
      store_group4_as(yr, g, d, vec, held[c]);
    }
  } else {
    for (int64_t g = threadIdx.x; g < groups; g += kThreads) {
      float v[4], wv[4];
      load_group4(xr, g, d, vec, v);
      load_group4(w, g, d, vec, wv);
      for (int j = 0; j < 4; ++j) v[j] = __fmul_rn(__fmul_rn(v[j], inv), wv[j]);
      store_group4_as(yr, g, d, vec, v);
    }
  }
}

// As rms_norm_kernel; b [d] or null. Mean first, then Σ(x − mean)² (two passes, as the reference).
template <int kThreads>
__global__ void layer_norm_kernel(const float* x, const float* w, const float* b, float eps,
                                  float* y, int64_t d, bool vec) {
  pdl_enter();
  const float* xr = x + blockIdx.x * d;
  float* yr = y + blockIdx.x * d;
  const int64_t groups = (d + 3) / 4;
  float s = 0.0f;
  for (int64_t g = threadIdx.x; g < groups; g += kThreads) {
    float v[4];
    load_group4(xr, g, d, vec, v);
    for (int j = 0; j < 4; ++j) s = __fadd_rn(s, v[j]);
  }
  const float mean = __fdiv_rn(block_reduce<kThreads>(s, SumOp{}), static_cast<float>(d));
  float ss = 0.0f;
  for (int64_t g = threadIdx.x; g < groups; g += kThreads) {
    float v[4];
    load_group4(xr, g, d, vec, v);
    for (int j = 0; j < 4; ++j) {
      const float c = 4 * g + j < d ? __fsub_rn(v[j], mean) : 0.0f;
      ss = __fmaf_rn(c, c, ss);
    }
  }
  ss = block_reduce<kThreads>(ss, SumOp{});
  const float inv = __frcp_rn(__fsqrt_rn(__fadd_rn(__fdiv_rn(ss, static_cast<float>(d)), eps)));
  for (int64_t g = threadIdx.x; g < groups; g += kThreads) {
    float v[4], wv[4], bv[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    load_group4(xr, g, d, vec, v);
    load_group4(w, g, d, vec, wv);
    if (b) load_group4(b, g, d, vec, bv);
    for (int j = 0; j < 4; ++j)
      v[j] = __fadd_rn(__fmul_rn(__fmul_rn(__fsub_rn(v[j], mean), inv), wv[j]), bv[j]);
    store_group4(yr, g, d, vec, v);
  }
}

// Rows of x (every dim but the last) as a grid size; checks it fits one.
int64_t row_count(const char* op, const Tensor& x) {
  const int64_t d = x.dim(-1), n = d ? x.numel() / d : 0;
  if (n > 0x7fffffff) invalid_argument(op, x.describe() + " has more than 2^31 - 1 rows");
  return n;
}

// Whole float4 groups: d a multiple of 4 and every buffer 16-byte aligned.
bool vec_rows(int64_t d, const void* a, const void* b, const void* c, const void* e = nullptr) {
  return d % 4 == 0 && aligned16(a) && aligned16(b) && aligned16(c) && aligned16(e);
}

// x += r first when r is given (add_rms_norm); y of TY.
template <typename TY>
void launch_rms_norm_as(float* x, int64_t n, int64_t d, const float* r, const Tensor& w, float eps,
                        TY* yd) {
  const unsigned grid = static_cast<unsigned>(n);
  const bool vec = vec_rows(d, x, w.raw(), yd, r);
  const float* wd = w.data<float>();
  // Only 256-thread blocks hold their groups: at 1024 threads the registers do not fit.
  if (d >= kLongRow)
    launch_kernel("rms_norm_kernel", rms_norm_kernel<kRowThreadsLong, false, TY>, grid,
                  kRowThreadsLong, 0, x, r, wd, eps, yd, d, vec);
  else if ((d + 3) / 4 <= kHeldGroups * kRowThreadsShort)
    launch_kernel("rms_norm_kernel", rms_norm_kernel<kRowThreadsShort, true, TY>, grid,
                  kRowThreadsShort, 0, x, r, wd, eps, yd, d, vec);
  else
    launch_kernel("rms_norm_kernel", rms_norm_kernel<kRowThreadsShort, false, TY>, grid,
                  kRowThreadsShort, 0, x, r, wd, eps, yd, d, vec);
}

void launch_rms_norm(const char* op, float* x, const Tensor& shape_of_x, const float* r,
                     const Tensor& w, float eps, Tensor& y) {
  const int64_t d = shape_of_x.dim(-1), n = row_count(op, shape_of_x);
  if (n == 0) return;
  if (y.dtype() == DType::kBF16)
    launch_rms_norm_as(x, n, d, r, w, eps, static_cast<__nv_bfloat16*>(y.raw()));
  else if (y.dtype() == DType::kF16)
    launch_rms_norm_as(x, n, d, r, w, eps, static_cast<__half*>(y.raw()));
  else
    launch_rms_norm_as(x, n, d, r, w, eps, y.data<float>());
}

}  // namespace

void rms_norm(const Tensor& x, const Tensor& w, float eps, Tensor& y) {
  // Not written through without r: x is only read.
  launch_rms_norm("rms_norm", const_cast<float*>(x.data<float>()), x, nullptr, w, eps, y);
}

void add_rms_norm(Tensor& x, const Tensor& r, const Tensor& w, float eps, Tensor& y) {
  launch_rms_norm("add_rms_norm", x.data<float>(), x, r.data<float>(), w, eps, y);
}

void layer_norm(const Tensor& x, const Tensor& w, const Tensor* b, float eps, Tensor& y) {
  const int64_t d = x.dim(-1), n = row_count("layer_norm", x);
  if (n == 0) return;
  const unsigned grid = static_cast<unsigned>(n);
  const float* bd = b ? b->data<float>() : nullptr;
  const bool vec = vec_rows(d, x.raw(), w.raw(), y.raw(), bd);
  const float *xd = x.data<float>(), *wd = w.data<float>();
  if (d >= kLongRow)
    launch_kernel("layer_norm_kernel", layer_norm_kernel<kRowThreadsLong>, grid, kRowThreadsLong, 0,
                  xd, wd, bd, eps, y.data<float>(), d, vec);
  else
    launch_kernel("layer_norm_kernel", layer_norm_kernel<kRowThreadsShort>, grid, kRowThreadsShort,
                  0, xd, wd, bd, eps, y.data<float>(), d, vec);
}

}  // namespace cairn::cuda
