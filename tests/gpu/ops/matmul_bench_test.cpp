// Matmul throughput on Llama-8B projection shapes (bf16 weights), in both settings of the
// batch-invariant switch: GB/s for decode (n = 1, 16) against the measured copy bandwidth,
// GFLOP/s for prefill (n = 8192) against the measured cuBLAS bf16 GEMM rate. Disabled by
// default (it asserts nothing and takes a while):
//   gpu_ops_test --gtest_also_run_disabled_tests --gtest_filter='*MatmulBench*'
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/limits.h"
#include "backend/cuda/matmul.h"
#include "backend/device.h"
#include "backend/ops.h"
#include "gpu_test_util.h"

namespace cairn {
namespace {

const Device kGpu{DeviceKind::kCuda, 0};

// Median milliseconds of one matmul, rotating over weight copies (together past the 60 MB L2).
double matmul_ms(const Tensor& x, const std::vector<Tensor>& ws, Tensor& y) {
  size_t i = 0;
  return cuda::median_ms(30, [&] { ops::matmul(x, ws[i++ % ws.size()], nullptr, y); });
}

struct Shape2 {
  int64_t m, k;
  const char* name;
};

void bench_shape(const Shape2& s, double copy_gbs, double gemm_gflops) {
  const int64_t w_bytes = s.m * s.k * 2;
  const size_t copies = static_cast<size_t>(std::max<int64_t>(2, (256ll << 20) / w_bytes + 1));
  std::vector<Tensor> ws;
  for (size_t i = 0; i < copies; ++i) {
    ws.push_back(empty_on(kGpu, {s.m, s.k}, DType::kBF16));
    device_backend(DeviceKind::kCuda).fill_uniform(ws.back(), 1 + i, -0.05f, 0.05f);
  }
  for (int64_t n : {int64_t{1}, int64_t{16}, int64_t{8192}}) {
    Tensor x = empty_on(kGpu, {n, s.k}, DType::kF32);
    device_backend(DeviceKind::kCuda).fill_uniform(x, 99, -1.0f, 1.0f);
    Tensor y = empty_on(kGpu, {n, s.m}, DType::kF32);
    double ms[2];
    for (int inv = 0; inv < 2; ++inv) {
      cuda::set_batch_invariant(inv == 1);
      ms[inv] = matmul_ms(x, ws, y);
    }
    const double bytes = double(w_bytes) + 4.0 * n * (s.k + s.m);
    const double flops = 2.0 * n * s.m * s.k;
    for (int inv = 0; inv < 2; ++inv) {
      const double gbs = bytes / (ms[inv] * 1e-3) / 1e9, gf = flops / (ms[inv] * 1e-3) / 1e9;
      std::printf(
          "%-10s n=%-5lld %-9s %8.4f ms  %7.0f GB/s (%3.0f%% of copy)  %8.0f GFLOP/s "
          "(%3.0f%% of GEMM)\n",
          s.name, static_cast<long long>(n), inv ? "invariant" : "fast", ms[inv], gbs,
          100 * gbs / copy_gbs, gf, 100 * gf / gemm_gflops);
    }
    std::printf("%-10s n=%-5lld invariant costs %.2fx the fast setting's time\n", s.name,
                static_cast<long long>(n), ms[1] / ms[0]);
  }
}

TEST(DISABLED_MatmulBench, DecodeShapes) {
  CAIRN_NEED_GPU();
  const bool saved = cuda::batch_invariant();
  const double copy_gbs = cuda::measure_copy_bandwidth_gbs();
  const double gemm_gflops = cuda::measure_bf16_gemm_gflops();
  std::printf("copy %.0f GB/s, cuBLAS bf16 GEMM %.0f GFLOP/s\n", copy_gbs, gemm_gflops);
  for (const Shape2& s : {Shape2{4096, 4096, "q/o"}, Shape2{14336, 4096, "gate/up"},
                          Shape2{4096, 14336, "down"}, Shape2{128256, 4096, "lm_head"}})
    bench_shape(s, copy_gbs, gemm_gflops);
  cuda::set_batch_invariant(saved);
}

}  // namespace
}  // namespace cairn
