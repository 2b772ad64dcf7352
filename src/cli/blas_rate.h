// The machine's achievable f32 GEMM rate, for `cairn bench`'s prefill figure: OpenBLAS's
// cblas_sgemm (all threads, its kernels for this CPU's ISA) timed at a prefill's shape. An
// oracle only, opened at run time when installed (libopenblas0); no op calls it.
#pragma once

#include <cstdint>

namespace cairn {

// Median GFLOP/s of y[m, n] = x[m, k] · w[n, k]ᵀ in f32 over a few runs after a warm-up, on
// `threads` threads; 0 when libopenblas.so.0 cannot be opened.
double measure_blas_sgemm_gflops(int64_t m, int64_t n, int64_t k, int threads);

}  // namespace cairn
