// kCopyStream (backend/device.h): copies issued on other threads than the ops' land once
// that stream is waited for, while the ops' stream keeps its own work, and page-locked
// host memory feeds them (what a layer-wise restore's readers do: docs/durability.md).
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "backend/device.h"
#include "core/error.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

TEST(CopyStream, CopiesFromOtherThreadsLandWhenTheStreamIsWaitedFor) {
  CAIRN_NEED_GPU();
  DeviceBackend& dev = device_backend(DeviceKind::kCuda);
  constexpr int kThreads = 4;
  constexpr int64_t kBytes = int64_t{3} << 20;  // per thread
  Tensor dst = poisoned_device({kThreads * kBytes}, DType::kU8);
  Tensor busy = poisoned_device({int64_t{1} << 24}, DType::kF32);
  // dst is a stream-ordered allocation, poisoned on the ops' stream: the copy
  // stream may write it once that is done (as a restore waits before its reads).
  dev.synchronize();
  dev.fill_uniform(busy, 3, 0.0f, 1.0f);  // ops' stream work meanwhile
  std::vector<std::thread> readers;
  for (int t = 0; t < kThreads; ++t)
    readers.emplace_back([&, t] {
      std::shared_ptr<Storage> pinned = dev.allocate_pinned_host(kBytes);
      std::memset(pinned->data(), 0x10 + t, kBytes);
      const Tensor src = Tensor::view_of(pinned, 0, {kBytes}, DType::kU8);
      Tensor part =
          Tensor::view_of(dst.storage(), dst.offset_bytes() + t * kBytes, {kBytes}, DType::kU8);
      dev.copy(src, part, kCopyStream);
      dev.synchronize(kCopyStream);  // pinned may go once this returns
    });
  for (std::thread& r : readers) r.join();
  const Tensor h = to_host(dst);
  for (int t = 0; t < kThreads; ++t)
    for (int64_t i = 0; i < kBytes; i += 4093)
      ASSERT_EQ(h.data<uint8_t>()[t * kBytes + i], 0x10 + t) << t << " " << i;
}

TEST(CopyStream, GraphsStayOnTheOpsStream) {
  CAIRN_NEED_GPU();
  EXPECT_THROW(device_backend(DeviceKind::kCuda).begin_capture(kCopyStream), Error);
}

}  // namespace
}  // namespace cairn::gpu_test
