// Out of device memory is a clear Error(kOutOfMemory), never a CUDA fault, and
// the device keeps working after it: a later allocation, fill and copy succeed.
#include <gtest/gtest.h>

#include "backend/device.h"
#include "core/error.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

TEST(DeviceMemory, AllocationPastTheCardIsOutOfMemoryAndRecoverable) {
  CAIRN_NEED_GPU();
  DeviceBackend& dev = device_backend(DeviceKind::kCuda);
  const size_t too_much = dev.total_bytes() + (size_t{1} << 30);
  try {
    dev.allocate(too_much);
    FAIL() << "allocating " << too_much << " bytes succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory) << e.what();
  }
  Tensor t = poisoned_device({1000}, DType::kF32);
  dev.fill_uniform(t, 5, 0.0f, 1.0f);  // launches a kernel: no stale error may surface
  Tensor h = to_host(t);
  for (int64_t i = 0; i < 1000; ++i) {
    ASSERT_GE(h.data<float>()[i], 0.0f);
    ASSERT_LT(h.data<float>()[i], 1.0f);
  }
}

TEST(DeviceMemory, TensorsPastTheCardAreOutOfMemory) {
  CAIRN_NEED_GPU();
  DeviceBackend& dev = device_backend(DeviceKind::kCuda);
  const int64_t rows = static_cast<int64_t>(dev.total_bytes() / (4096 * 2)) + 1024;
  try {
    Tensor w = empty_on(Device{DeviceKind::kCuda, 0}, {rows, 4096}, DType::kBF16);
    FAIL() << "a " << w.describe() << " fit on the card";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory) << e.what();
  }
}

}  // namespace
}  // namespace cairn::gpu_test
