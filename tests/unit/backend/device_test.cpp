#include "backend/device.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace cairn {
namespace {

TEST(CpuDevice, AllocatesCopiesAndReportsMemory) {
  DeviceBackend& cpu = device_backend(DeviceKind::kCpu);
  EXPECT_EQ(cpu.device(), Device::cpu());
  Tensor a = empty_on(Device::cpu(), {3, 5}, DType::kF32);
  Tensor b = Tensor::view_of(cpu.allocate_pinned_host(a.nbytes()), 0, {3, 5}, DType::kF32);
  for (int i = 0; i < 15; ++i) a.data<float>()[i] = 0.5f * static_cast<float>(i) - 3.0f;
  cpu.copy(a, b);
  cpu.synchronize();
  for (int i = 0; i < 15; ++i) EXPECT_EQ(b.data<float>()[i], a.data<float>()[i]);
  EXPECT_GT(cpu.total_bytes(), 0u);
  EXPECT_LE(cpu.free_bytes(), cpu.total_bytes());
}

TEST(CpuDevice, MismatchedCopyIsAnError) {
  DeviceBackend& cpu = device_backend(DeviceKind::kCpu);
  Tensor a = empty_on(Device::cpu(), {3, 5}, DType::kF32);
  Tensor b = empty_on(Device::cpu(), {5, 3}, DType::kF32);
  EXPECT_THROW(cpu.copy(a, b), Error);
  Tensor c = empty_on(Device::cpu(), {3, 5}, DType::kBF16);
  EXPECT_THROW(cpu.copy(a, c), Error);
}

TEST(CpuDevice, HasNoGraphsAndNoCudaBackendIsNamed) {
  DeviceBackend& cpu = device_backend(DeviceKind::kCpu);
  EXPECT_FALSE(cpu.supports_graphs());
  EXPECT_THROW(cpu.begin_capture(0), Error);
  if (CAIRN_TEST_CUDA_BUILT) return;  // the CUDA backend is there (a GPU or not)
  try {
    device_backend(DeviceKind::kCuda);
    FAIL() << "a CPU-only build has no CUDA backend";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("CAIRN_CUDA"), std::string::npos);
  }
}

}  // namespace
}  // namespace cairn
