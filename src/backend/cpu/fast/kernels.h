// Entry points of the per-ISA kernel files (scalar/, avx2/, avx512/). Each
// file is compiled with its own ISA flags; the op files (matmul.cpp, ...)
// pick one through cpu::active_isa() and run it on the thread pool.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace cairn::ops::fast {

// y[n, m] = x[n, k] · w[m, k]ᵀ (+ bias[m]); all row-major and contiguous.
struct MatmulArgs {
  const float* x = nullptr;  // [n, k]
  const void* w = nullptr;   // [m, k] in w_dtype
  DType w_dtype = DType::kF32;
  const float* bias = nullptr;  // [m] or null
  float* y = nullptr;           // [n, m]
  int64_t n = 0, k = 0, m = 0;
};

// Floats of scratch matmul_cols needs for one call (panel and accumulators).
int64_t matmul_scratch_floats(int64_t n, int64_t k);

// Computes columns [j_begin, j_end) of y for every row. scratch holds
// matmul_scratch_floats(n, k) floats, 64-byte aligned. The reduction over k of
// an output uses `lanes` accumulators (lane l takes k ≡ l mod lanes, in order
// of k, by fused multiply-add; the tail past the last full group is zero
// padded) summed by halving: lane l += lane l + lanes/2, then /4, ... down to 1.
// So an output never depends on n, on the column range, or on the blocking.
void matmul_cols_scalar(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch);
void matmul_cols_avx2(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch);
void matmul_cols_avx512(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch);
// The AVX-512 order (16 lanes) computed portably, to test that kernel against.
void matmul_cols_scalar16(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch);

}  // namespace cairn::ops::fast

namespace cairn::ops::fast {

// A tight loop of `iters` rounds of 10 independent vector FMAs; returns the
// flops done (2 per lane per FMA). For measuring the peak rate.
double fma_peak_scalar(int64_t iters);
double fma_peak_avx2(int64_t iters);
double fma_peak_avx512(int64_t iters);

}  // namespace cairn::ops::fast

#include "backend/ops.h"

namespace cairn::ops::fast {

// Row-level kernels of one ISA; the op files loop over rows (and threads) and
// call these. n counts elements; buffers are contiguous; y may alias x.
struct RowKernels {
  // Σ x[i] w[i] in the lane order of the matmul (kernels.h above).
  float (*dot)(const float* x, const void* w, DType w_dtype, int64_t n);
  // y[i] = a * v[i] + y[i] (fused).
  void (*axpy)(float a, const void* v, DType v_dtype, float* y, int64_t n);
  void (*scale)(const float* x, float s, float* y, int64_t n);  // y = x * s
  void (*add)(const float* a, const float* b, float* y, int64_t n);
  void (*sub)(const float* x, float s, float* y, int64_t n);  // y = x - s
  float (*sum)(const float* x, int64_t n);
  float (*sum_sq_diff)(const float* x, float c, int64_t n);  // Σ (x - c)²
  float (*max)(const float* x, int64_t n);
  // y = (x - mean) * inv * w (+ b when b is not null).
  void (*normalize)(const float* x, float mean, float inv, const float* w, const float* b, float* y,
                    int64_t n);
  // y = exp(x - shift); returns Σ y (summed in lane order).
  float (*exp_sum)(const float* x, float shift, float* y, int64_t n);
  void (*gated)(const float* g, const float* u, Activation act, float* y, int64_t n);
  void (*softcap)(float* x, float cap, int64_t n);  // x = cap * tanh(x / cap)
  // dst = src converted (f32/bf16/f16, nearest even).
  void (*convert)(const void* src, DType src_dtype, void* dst, DType dst_dtype, int64_t n);
  // (a, b) = (a c - b s, b c + a s) elementwise: the two halves of half-split rope.
  void (*rotate)(float* a, float* b, const float* cos, const float* sin, int64_t n);
  // The same on pairs (x[2i], x[2i + 1]): interleaved rope.
  void (*rotate_pairs)(float* x, const float* cos, const float* sin, int64_t n_pairs);
};

const RowKernels& row_kernels_scalar();
const RowKernels& row_kernels_avx2();
const RowKernels& row_kernels_avx512();
// The kernels of cpu::active_isa().
const RowKernels& row_kernels();

}  // namespace cairn::ops::fast
