// OnDevice: a scope whose ops run on one device (DeviceBackend::enter_device). A tensor-
// parallel KV shard lives in its rank's GPU memory; the engine's thread, which drives the
// model's first device, allocates, copies, converts and frees that shard's pages inside an
// OnDevice of the shard's device. Nothing happens for host memory or where the thread already
// runs on the device (every single-GPU run).
#pragma once

#include "backend/device.h"

namespace cairn {

class OnDevice {
 public:
  explicit OnDevice(Device d);
  ~OnDevice();  // waits for the scope's work when it switched devices
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  DeviceBackend* backend_ = nullptr;
  void* token_ = nullptr;
};

}  // namespace cairn
