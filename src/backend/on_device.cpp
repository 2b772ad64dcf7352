#include "backend/on_device.h"

namespace cairn {

OnDevice::OnDevice(Device d) {
  if (d.kind == DeviceKind::kCpu) return;
  backend_ = &device_backend(d.kind);
  token_ = backend_->enter_device(d.index);
}

OnDevice::~OnDevice() {
  if (backend_ != nullptr) backend_->leave_device(token_);
}

}  // namespace cairn
