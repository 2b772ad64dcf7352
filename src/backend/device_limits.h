// The limits a device's benchmarks are measured against, in one call for any
// device kind: memory bandwidth (bytes read plus written per second) and the
// matrix-multiply rate (CPU: the f32 FMA peak; CUDA: cuBLAS bf16 GEMM on random data).
#pragma once

#include "core/storage.h"

namespace cairn {

struct DeviceLimits {
  double bandwidth_gbs = 0;
  double matmul_gflops = 0;
  const char* matmul_what = "";  // what the matmul rate is of
};

DeviceLimits measure_device_limits(Device device);

}  // namespace cairn
