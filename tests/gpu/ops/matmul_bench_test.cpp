// Matmul throughput on Llama-8B projection shapes (bf16 weights), in both settings of the
// batch-invariant switch and on the cuBLASLt fixed algorithm the invariant mode used before the
// tensor-core GEMM (mma_gemm.cu): GB/s for decode (n = 1 … 128) against the measured copy
// bandwidth and the k16 chain's floor (step_latency.h), GFLOP/s for prefill (n = 8192) against the
// measured cuBLAS bf16 GEMM rate; and whether the tensor-core GEMM's bits equal the cuBLASLt fixed
// algorithm's. Disabled by default (it takes a while; only K16StepLatency asserts, that its chains
// ran):
//   gpu_ops_test --gtest_also_run_disabled_tests --gtest_filter='*MatmulBench*'
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/gemm_lt.h"
#include "backend/cuda/limits.h"
#include "backend/cuda/matmul.h"
#include "backend/cuda/mma_gemm.h"
#include "backend/cuda/round_input.h"
#include "backend/cuda/step_latency.h"
#include "backend/cuda/wgmma_gemm.h"
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

// The least time of a product of width k whose outputs each walk k / 16 dependent steps.
double chain_us(int64_t k, double step_ns) {
  return static_cast<double>(k / 16) * step_ns / 1e3;
}

// The k16 chain's step (step_latency.h): the invariant GEMM's third limit, beside the copy
// bandwidth and the GEMM rate. Checks only that each chain ran and took time.
TEST(DISABLED_MatmulBench, K16StepLatency) {
  CAIRN_NEED_GPU();
  const cuda::K16StepLatency step = cuda::measure_k16_step_latency();
  std::printf("k16 step: mma.sync m16n8k16 %.1f ns, wgmma m64n64k16 %.1f ns\n", step.mma_sync_ns,
              step.wgmma_ns);
  EXPECT_GT(step.mma_sync_ns, 0.0);
  EXPECT_LT(step.mma_sync_ns, 1e4);
  if (cuda::wgmma_gemm_available()) {
    EXPECT_GT(step.wgmma_ns, 0.0);
  }
}

// cuBLASLt with the invariant mode's former fixed algorithm; false when it has none.
bool lt_fixed(const Tensor& x, const Tensor& w, Tensor& y) {
  cuda::GemmLtShape s;
  s.n = x.dim(0);
  s.m = w.dim(0);
  s.k = w.dim(1);
  s.dtype = w.dtype();
  const cuda::GemmLtPlan* plan = cuda::gemm_lt_plan(s, cuda::AlgoPolicy::kFixedPerShapeClass);
  if (!plan) return false;
  cuda::gemm_lt_run(plan, w.raw(), cuda::round_input(x, w.dtype()), nullptr, y.data<float>());
  return true;
}

// Elements of the tensor-core GEMM's y whose bits differ from the cuBLASLt fixed algorithm's.
int64_t bits_differing(const Tensor& x, const Tensor& w) {
  Tensor a = empty_on(kGpu, {x.dim(0), w.dim(0)}, DType::kF32);
  Tensor b = empty_on(kGpu, {x.dim(0), w.dim(0)}, DType::kF32);
  cuda::mma_gemm(cuda::round_input(x, w.dtype()), w, nullptr, a);
  if (!lt_fixed(x, w, b)) return -1;
  Tensor ha = gpu_test::to_host(a), hb = gpu_test::to_host(b);
  int64_t differ = 0;
  for (int64_t i = 0; i < ha.numel(); ++i)
    differ += std::memcmp(ha.data<float>() + i, hb.data<float>() + i, 4) != 0;
  return differ;
}

void report(const Shape2& s, int64_t n, const char* what, double ms, double copy_gbs,
            double gemm_gflops) {
  const double bytes = double(s.m) * s.k * 2 + 4.0 * n * (s.k + s.m);
  const double flops = 2.0 * n * s.m * s.k;
  const double gbs = bytes / (ms * 1e-3) / 1e9, gf = flops / (ms * 1e-3) / 1e9;
  std::printf(
      "%-8s n=%-5lld %-14s %8.4f ms %6.0f GB/s (%3.0f%% of copy) %7.0f GFLOP/s (%3.0f%% of "
      "GEMM)\n",
      s.name, static_cast<long long>(n), what, ms, gbs, 100 * gbs / copy_gbs, gf,
      100 * gf / gemm_gflops);
}

// Random bf16 weights of shape s, enough copies to exceed 256 MB together (past the L2), so
// that rotating over them times reads from device memory.
std::vector<Tensor> weight_copies(const Shape2& s) {
  const int64_t w_bytes = s.m * s.k * 2;
  std::vector<Tensor> ws;
  for (int64_t i = 0; i < std::max<int64_t>(2, (256ll << 20) / w_bytes + 1); ++i) {
    ws.push_back(empty_on(kGpu, {s.m, s.k}, DType::kBF16));
    device_backend(DeviceKind::kCuda)
        .fill_uniform(ws.back(), 1 + static_cast<uint64_t>(i), -0.05f, 0.05f);
  }
  return ws;
}

void bench_shape(const Shape2& s, double copy_gbs, double gemm_gflops) {
  const std::vector<Tensor> ws = weight_copies(s);
  for (int64_t n : {int64_t{1}, int64_t{16}, int64_t{64}, int64_t{128}, int64_t{8192}}) {
    Tensor x = empty_on(kGpu, {n, s.k}, DType::kF32);
    device_backend(DeviceKind::kCuda).fill_uniform(x, 99, -1.0f, 1.0f);
    Tensor y = empty_on(kGpu, {n, s.m}, DType::kF32);
    double ms[2];
    for (int inv = 0; inv < 2; ++inv) {
      cuda::set_batch_invariant(inv == 1);
      ms[inv] = matmul_ms(x, ws, y);
    }
    size_t i = 0;
    const double lt_ms = cuda::median_ms(30, [&] { lt_fixed(x, ws[i++ % ws.size()], y); });
    report(s, n, "fast", ms[0], copy_gbs, gemm_gflops);
    report(s, n, "invariant", ms[1], copy_gbs, gemm_gflops);
    report(s, n, "lt-fixed", lt_ms, copy_gbs, gemm_gflops);
    std::printf("%-8s n=%-5lld invariant (tile %s) costs %.2fx the fast setting, %.2fx lt-fixed\n",
                s.name, static_cast<long long>(n), cuda::mma_gemm_tile_name(n, s.m), ms[1] / ms[0],
                ms[1] / lt_ms);
  }
  Tensor x = empty_on(kGpu, {1024, s.k}, DType::kF32);
  device_backend(DeviceKind::kCuda).fill_uniform(x, 7, -1.0f, 1.0f);
  std::printf("%-8s n=1024 tensor-core GEMM vs cuBLASLt fixed: %lld of %lld elements differ\n",
              s.name, static_cast<long long>(bits_differing(x, ws[0])),
              static_cast<long long>(1024 * s.m));
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

// The invariant mode at 1 and 16 rows only (CAIRN_MMA_TILE pins a tile for a process):
//   gpu_ops_test --gtest_also_run_disabled_tests --gtest_filter='*NarrowRows*'
TEST(DISABLED_MatmulBench, NarrowRows) {
  CAIRN_NEED_GPU();
  const bool saved = cuda::batch_invariant();
  cuda::set_batch_invariant(true);
  const double copy_gbs = cuda::measure_copy_bandwidth_gbs();
  for (const Shape2& s : {Shape2{4096, 4096, "q/o"}, Shape2{1024, 4096, "k/v"},
                          Shape2{14336, 4096, "gate/up"}, Shape2{4096, 14336, "down"}}) {
    const std::vector<Tensor> ws = weight_copies(s);
    const int64_t w_bytes = s.m * s.k * 2;
    for (int64_t n : {int64_t{1}, int64_t{16}}) {
      Tensor x = empty_on(kGpu, {n, s.k}, DType::kF32), y = empty_on(kGpu, {n, s.m}, DType::kF32);
      device_backend(DeviceKind::kCuda).fill_uniform(x, 99, -1.0f, 1.0f);
      const double ms = matmul_ms(x, ws, y);
      const double gbs = double(w_bytes) / (ms * 1e-3) / 1e9;
      // One weight again and again: from L2 where it fits (50 MB), so what is left is the
      // kernel's own pace (its k16 chains), not memory's.
      const double resident_ms = matmul_ms(x, {ws.front()}, y);
      std::printf(
          "narrow %-8s n=%-3lld tile %-6s %8.4f ms %6.0f GB/s (%3.0f%% of copy); one weight "
          "over and over %8.4f ms\n",
          s.name, static_cast<long long>(n), cuda::mma_gemm_tile_name(n, s.m), ms, gbs,
          100 * gbs / copy_gbs, resident_ms);
    }
  }
  cuda::set_batch_invariant(saved);
}

// CAIRN_SWEEP_SHAPES ("24576x4096,30720x3840": rows of w by k), else the Llama-8B projections.
std::vector<Shape2> sweep_shapes() {
  if (std::getenv("CAIRN_SWEEP_SHAPES") == nullptr)
    return {Shape2{6144, 4096, "qkv"}, Shape2{4096, 4096, "o"}, Shape2{28672, 4096, "gate_up"},
            Shape2{4096, 14336, "down"}};
  std::vector<Shape2> shapes;
  for (auto [m, k] : gpu_test::sizes_from_env("CAIRN_SWEEP_SHAPES", {}))
    shapes.push_back(Shape2{m, k, "given"});
  return shapes;
}

// CAIRN_SWEEP_TILES ("wt128x128s6,ws128x128s6k1w2": one tile's kernels alone, e.g. under a
// profiler), else every tile.
std::vector<std::string> sweep_tiles() {
  const char* env = std::getenv("CAIRN_SWEEP_TILES");
  if (env == nullptr) return cuda::mma_gemm_tile_names();
  std::vector<std::string> tiles;
  for (const char* c = env; *c != 0;) {
    const char* end = std::strchr(c, ',');
    tiles.emplace_back(c, end == nullptr ? std::strlen(c) : static_cast<size_t>(end - c));
    c = end == nullptr ? c + std::strlen(c) : end + 1;
  }
  return tiles;
}

// CAIRN_SWEEP_ROWS ("64,128"), else 16, 32, 64 and 128.
std::vector<int64_t> sweep_rows() {
  const char* env = std::getenv("CAIRN_SWEEP_ROWS");
  if (env == nullptr) return {16, 32, 64, 128};
  std::vector<int64_t> rows;
  for (const char* c = env; c != nullptr; c = std::strchr(c + 1, ','))
    rows.push_back(std::atoll(*c == ',' ? c + 1 : c));
  return rows;
}

// Every tile of the tensor-core GEMM at 16-128 rows (above, cuBLASLt takes over) on the Llama-8B
// projections (q|k|v and gate|up fused), or CAIRN_SWEEP_SHAPES at CAIRN_SWEEP_ROWS: µs a product
// and GB/s of w, for choosing the tile by n and m (shape_for in mma_gemm.cu):
//   gpu_ops_test --gtest_also_run_disabled_tests --gtest_filter='*TileSweep*'
TEST(DISABLED_MatmulBench, TileSweep) {
  CAIRN_NEED_GPU();
  const bool saved = cuda::batch_invariant();
  cuda::set_batch_invariant(true);
  const cuda::K16StepLatency step = cuda::measure_k16_step_latency();
  for (const Shape2& s : sweep_shapes()) {
    const std::vector<Tensor> ws = weight_copies(s);
    for (int64_t n : sweep_rows()) {
      Tensor x = empty_on(kGpu, {n, s.k}, DType::kF32), y = empty_on(kGpu, {n, s.m}, DType::kF32);
      device_backend(DeviceKind::kCuda).fill_uniform(x, 99, -1.0f, 1.0f);
      std::printf("sweep %-8s n=%-4lld k16 chain %.1f us (default %-7s):", s.name,
                  static_cast<long long>(n), chain_us(s.k, step.wgmma_ns),
                  cuda::mma_gemm_tile_name(n, s.m, s.k));
      for (const std::string& tile : sweep_tiles()) {
        cuda::force_mma_tile(tile);
        const double ms = matmul_ms(x, ws, y);
        std::printf(" %s %.1f", tile.c_str(), ms * 1e3);
      }
      cuda::force_mma_tile("");
      std::printf(" us\n");
    }
  }
  cuda::set_batch_invariant(saved);
}

// Every tile at 1-16 rows (the thin tiles and their configs; decode) on the Llama-8B projections
// and LM head: µs a product and % of the copy bandwidth, for choosing mma_thin_pick:
//   gpu_ops_test --gtest_also_run_disabled_tests --gtest_filter='*ThinSweep*'
TEST(DISABLED_MatmulBench, ThinSweep) {
  CAIRN_NEED_GPU();
  const bool saved = cuda::batch_invariant();
  cuda::set_batch_invariant(true);
  const double copy_gbs = cuda::measure_copy_bandwidth_gbs();
  const cuda::K16StepLatency step = cuda::measure_k16_step_latency();
  for (const Shape2& s :
       {Shape2{6144, 4096, "qkv"}, Shape2{4096, 4096, "o"}, Shape2{28672, 4096, "gate_up"},
        Shape2{4096, 14336, "down"}, Shape2{128256, 4096, "lm_head"}}) {
    const std::vector<Tensor> ws = weight_copies(s);
    const double floor_us = double(s.m) * s.k * 2 / (copy_gbs * 1e3);
    for (int64_t n : {1, 2, 4, 8, 16}) {
      Tensor x = empty_on(kGpu, {n, s.k}, DType::kF32), y = empty_on(kGpu, {n, s.m}, DType::kF32);
      device_backend(DeviceKind::kCuda).fill_uniform(x, 99, -1.0f, 1.0f);
      std::printf("thin %-8s n=%-3lld floor %6.1f us, k16 chain %.1f us (default %s):", s.name,
                  static_cast<long long>(n), floor_us, chain_us(s.k, step.mma_sync_ns),
                  cuda::mma_gemm_tile_name(n, s.m));
      for (const std::string& tile : cuda::mma_gemm_tile_names()) {
        if (tile.rfind("thin", 0) != 0) continue;
        cuda::force_mma_tile(tile);
        std::printf(" %s %.1f", tile.c_str(), matmul_ms(x, ws, y) * 1e3);
      }
      cuda::force_mma_tile("");
      std::printf(" us\n");
    }
  }
  cuda::set_batch_invariant(saved);
}

}  // namespace
}  // namespace cairn
