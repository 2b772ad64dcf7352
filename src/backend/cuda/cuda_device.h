// The CUDA DeviceBackend (device.h): cudaMalloc'd storage, page-locked host
// buffers, the ops' stream, and graph capture on it. Reached through
// device_backend(DeviceKind::kCuda) in builds with -DCAIRN_CUDA=ON.
#pragma once

#include "backend/device.h"

namespace cairn::cuda {

// The backend of device 0. Throws Error(kUnsupported) when no GPU is present.
DeviceBackend& cuda_device();

}  // namespace cairn::cuda
