// The op profiler (op_profile.h, `cairn bench --device cuda --profile-ops`): inside a window
// every op is counted and timed, matmul by shape; outside one nothing is recorded; results are
// the same bits with the timed table as with the plain one, whose queries it passes through.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "backend/device.h"
#include "backend/ops.h"
#include "gpu_test_util.h"

namespace cairn {
namespace {

int count_of(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The calls column of the row whose op is `label`, or -1.
int calls_of(const std::string& report, const std::string& label) {
  const size_t at = report.find("    " + label + " ");
  if (at == std::string::npos) return -1;
  return std::stoi(report.substr(at + 4 + label.size()));
}

TEST(CudaOpProfile, CountsOpsInsideTheWindowOnly) {
  CAIRN_NEED_GPU();
  DeviceBackend& dev = device_backend(DeviceKind::kCuda);
  std::mt19937 rng(5);
  const Tensor x = gpu_test::to_device(gpu_test::random_host({3, 64}, DType::kF32, rng));
  const Tensor w = gpu_test::to_device(gpu_test::random_host({48, 64}, DType::kBF16, rng));
  Tensor y = empty_on(x.device(), {3, 48}, DType::kF32);
  ops::matmul(x, w, nullptr, y);  // before the window: not counted
  const Tensor plain = gpu_test::to_host(y);

  gpu_test::FusedInputsScope fused(true);
  const DType input = ops::matmul_input_dtype(w);
  EXPECT_EQ(input, DType::kBF16);
  dev.start_op_profile();
  for (int i = 0; i < 3; ++i) ops::matmul(x, w, nullptr, y);
  EXPECT_EQ(ops::matmul_input_dtype(w), input);  // the table's query passes through
  ops::add(y, y, y);
  const std::string report = dev.stop_op_profile();

  EXPECT_NE(report.find("matmul n=3 48x64 bf16"), std::string::npos) << report;
  EXPECT_NE(report.find("add"), std::string::npos) << report;
  EXPECT_EQ(count_of(report, "\n"), 4) << report;                     // header, two ops, totals
  EXPECT_EQ(calls_of(report, "matmul n=3 48x64 bf16"), 3) << report;  // none outside the window
  EXPECT_EQ(calls_of(report, "add"), 1) << report;
  ops::matmul(x, w, nullptr, y);
  const Tensor timed = gpu_test::to_host(y);
  EXPECT_EQ(std::memcmp(timed.raw(), plain.raw(), plain.nbytes()), 0) << "timing changed bits";

  dev.start_op_profile();
  EXPECT_EQ(count_of(dev.stop_op_profile(), "\n"), 2);  // an empty window: header and totals
}

}  // namespace
}  // namespace cairn
