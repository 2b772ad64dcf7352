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
