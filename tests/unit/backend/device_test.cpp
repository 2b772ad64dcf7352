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

// A block of columns of every row, in one call; the rest of dst untouched; out of range refused.
TEST(CpuDevice, CopiesABlockOfColumns) {
  DeviceBackend& cpu = device_backend(DeviceKind::kCpu);
  Tensor src = empty_on(Device::cpu(), {3, 5}, DType::kF32);
  Tensor dst = empty_on(Device::cpu(), {3, 7}, DType::kF32);
  for (int i = 0; i < 15; ++i) src.data<float>()[i] = static_cast<float>(i);
  for (int i = 0; i < 21; ++i) dst.data<float>()[i] = -1.0f;
  cpu.copy_columns(src, 1, dst, 4, 3);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 7; ++c)
      EXPECT_EQ(dst.data<float>()[r * 7 + c], c >= 4 ? static_cast<float>(r * 5 + c - 3) : -1.0f)
          << r << ", " << c;
  EXPECT_THROW(cpu.copy_columns(src, 3, dst, 0, 3), Error) << "past src's columns";
  EXPECT_THROW(cpu.copy_columns(src, 0, dst, 5, 3), Error) << "past dst's columns";
  Tensor rows4 = empty_on(Device::cpu(), {4, 7}, DType::kF32);
  EXPECT_THROW(cpu.copy_columns(src, 0, rows4, 0, 1), Error) << "rows differ";
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
