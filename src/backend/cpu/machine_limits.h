// The physical limits CPU benchmarks are measured against (DESIGN.md §6):
// memory bandwidth for decode, the f32 multiply-add rate for prefill. Both run
// on every thread of ThreadPool::global() and take a fraction of a second.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cairn::ops::cpu {

// A copy between two 256 MiB buffers on every thread; bytes read plus bytes
// written per second, in GB/s (1e9), median of 5 runs.
double measure_memory_bandwidth_gbs();
// The same over two buffers of `bytes` (well past the last-level cache), median of `runs`.
double measure_memory_bandwidth_gbs(size_t bytes, int runs);

// The peak f32 FMA rate of the active ISA: a loop of independent vector FMAs
// (10 accumulators per thread, no loads) on every thread, in GFLOP/s (2 flops
// per lane per FMA), median of 5 runs. An upper bound for any GEMM.
double measure_f32_gemm_gflops();
// The same with `iters` rounds per thread, median of `runs`.
double measure_f32_gemm_gflops(int64_t iters, int runs);

}  // namespace cairn::ops::cpu
