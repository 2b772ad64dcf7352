// The GPU's physical limits its benchmarks are measured against (DESIGN.md §6),
// measured in the same run: device-to-device copy bandwidth (bytes read plus
// bytes written) for decode, and the bf16 GEMM rate of cuBLAS (f32 accumulate)
// on random data for prefill. Each is the median of timed repeats (CUDA events)
// after warm-up.
#pragma once

#include <functional>

namespace cairn::cuda {

// Median milliseconds of `body` (work issued on stream()) over `runs` repeats timed with
// CUDA events, after 3 untimed warm-ups.
double median_ms(int runs, const std::function<void()>& body);

// A copy between two 2 GiB buffers; GB/s (1e9), median of 20.
double measure_copy_bandwidth_gbs();
// An 8192³ bf16 GEMM (cublasGemmEx, CUBLAS_COMPUTE_32F) over random inputs;
// GFLOP/s, median of 20.
double measure_bf16_gemm_gflops();

}  // namespace cairn::cuda
