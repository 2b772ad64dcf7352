#include "cli/device_flag.h"

#include "backend/device.h"
#include "core/error.h"

namespace cairn {

void add_device_flag(CLI::App& cmd, std::string& device) {
  cmd.add_option("--device", device,
                 "where the model runs: cuda, cpu, or auto (a GPU when present)")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}))
      ->capture_default_str();
}

Device resolve_device(const std::string& flag) {
  if (flag == "cpu") return Device::cpu();
  if (flag == "cuda") return device_backend(DeviceKind::kCuda).device();  // throws without one
  if (flag != "auto")
    fail(ErrorCode::kInvalidArgument, "--device '{}': expected cuda, cpu or auto", flag);
  try {
    return device_backend(DeviceKind::kCuda).device();
  } catch (const Error&) {
    return Device::cpu();
  }
}

}  // namespace cairn
