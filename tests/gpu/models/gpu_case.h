// What the GPU model tests share: the device they run on, and whether one is present
// (each test skips without one).
#pragma once

#include "backend/device.h"
#include "core/error.h"

namespace cairn::test {

inline const Device kGpu{DeviceKind::kCuda, 0};

inline bool gpu_present() {
  try {
    device_backend(DeviceKind::kCuda);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace cairn::test
