#include "backend/device_limits.h"

#include "backend/cpu/machine_limits.h"
#ifdef CAIRN_HAVE_CUDA
#include "backend/cuda/limits.h"
#endif
#include "core/error.h"

namespace cairn {

DeviceLimits measure_device_limits(Device device) {
  if (device.kind == DeviceKind::kCpu)
    return {ops::cpu::measure_memory_bandwidth_gbs(), ops::cpu::measure_f32_gemm_gflops(),
            "f32 FMA peak"};
#ifdef CAIRN_HAVE_CUDA
  return {cuda::measure_copy_bandwidth_gbs(), cuda::measure_bf16_gemm_gflops(), "cuBLAS bf16 GEMM"};
#else
  fail(ErrorCode::kUnsupported, "this build of cairn has no CUDA backend");
#endif
}

}  // namespace cairn
