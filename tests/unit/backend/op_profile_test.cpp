// The op profiler on the CPU (op_profile.h, `cairn bench --profile-ops`): inside a window
// every op is counted, matmul by shape, with its time; outside one nothing is; the
// window's table wraps the registered one and stop puts that one back.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "backend/device.h"
#include "backend/op_table.h"
#include "backend/ops.h"

namespace cairn {
namespace {

// The calls column of the row whose op is `label`, or -1.
int calls_of(const std::string& report, const std::string& label) {
  const size_t at = report.find("    " + label + " ");
  if (at == std::string::npos) return -1;
  return std::stoi(report.substr(at + 4 + label.size()));
}

int lines_of(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

Tensor filled(const Shape& shape, DType dtype, uint64_t seed) {
  Tensor t = Tensor::empty(shape, dtype);
  device_backend(DeviceKind::kCpu).fill_uniform(t, seed, -1.0f, 1.0f);
  return t;
}

TEST(OpProfile, CountsOpsInsideTheWindowOnly) {
  DeviceBackend& dev = device_backend(DeviceKind::kCpu);
  const Tensor x = filled({3, 64}, DType::kF32, 1), w = filled({48, 64}, DType::kBF16, 2);
  Tensor y = Tensor::empty({3, 48}, DType::kF32), plain = Tensor::empty({3, 48}, DType::kF32);
  ops::matmul(x, w, nullptr, plain);  // before the window: not counted
  const auto plain_matmul = ops::op_table(DeviceKind::kCpu).matmul;

  dev.start_op_profile();
  EXPECT_NE(ops::op_table(DeviceKind::kCpu).matmul, plain_matmul);
  for (int i = 0; i < 3; ++i) ops::matmul(x, w, nullptr, y);
  ops::add(y, y, y);
  const std::string report = dev.stop_op_profile();
  EXPECT_EQ(ops::op_table(DeviceKind::kCpu).matmul, plain_matmul);
  ops::matmul(x, w, nullptr, y);  // after it: not counted, and the same bits as before

  EXPECT_EQ(calls_of(report, "matmul n=3 48x64 bf16"), 3) << report;
  EXPECT_EQ(calls_of(report, "add"), 1) << report;
  EXPECT_EQ(lines_of(report), 4) << report;  // header, two ops, totals
  EXPECT_NE(report.find("window"), std::string::npos) << report;
  EXPECT_EQ(std::memcmp(y.raw(), plain.raw(), y.nbytes()), 0);
  EXPECT_EQ(dev.stop_op_profile(), "");  // no window open

  dev.start_op_profile();
  EXPECT_EQ(lines_of(dev.stop_op_profile()), 2);  // an empty window: header and totals
}

// A fused form the backend lacks runs as the ops it fuses, each counted.
TEST(OpProfile, FallbackOfAFusedFormCountsItsOps) {
  DeviceBackend& dev = device_backend(DeviceKind::kCpu);
  Tensor x = filled({2, 16}, DType::kF32, 3);
  const Tensor r = filled({2, 16}, DType::kF32, 4), w = filled({16}, DType::kF32, 5);
  Tensor y = Tensor::empty({2, 16}, DType::kF32);
  dev.start_op_profile();
  ops::add_rms_norm(x, r, w, 1e-6f, y);
  const std::string report = dev.stop_op_profile();
  EXPECT_EQ(calls_of(report, "add"), 1) << report;
  EXPECT_EQ(calls_of(report, "rms_norm"), 1) << report;
}

}  // namespace
}  // namespace cairn
