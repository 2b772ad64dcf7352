// CPU op benchmark: GEMV (decode) in GB/s against the measured memory
// bandwidth, GEMM (prefill) in GFLOP/s against the measured peak FMA rate,
// both limits measured in the same run. Weights rotate over copies totalling
// more than the last-level cache, so GEMV reads them from memory.
//   cairn_ops_bench [--quick]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/machine_limits.h"
#include "backend/cpu/reference/reference.h"
#include "backend/ops.h"
#include "core/thread_pool.h"

namespace {

using cairn::DType;
using cairn::Tensor;

Tensor filled(const cairn::Shape& shape, DType dt, uint32_t seed) {
  Tensor t = Tensor::empty(shape, dt);
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    const float v = static_cast<float>(s >> 8) / 16777216.0f - 0.5f;
    cairn::ops::ref::store_from_f32(t.raw(), dt, i, v == 0 ? 0.25f : v);
  }
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median seconds of one matmul of x [n, k] over rotating copies of w [m, k].
double time_matmul(int64_t n, int64_t k, int64_t m, DType dt, int reps) {
  const int64_t w_bytes = m * k * (dt == DType::kF32 ? 4 : 2);
  const int64_t copies = std::max<int64_t>(1, (int64_t{256} << 20) / w_bytes);
  std::vector<Tensor> ws;
  for (int64_t c = 0; c < copies; ++c) ws.push_back(filled({m, k}, dt, static_cast<uint32_t>(c)));
  Tensor x = filled({n, k}, DType::kF32, 99);
  Tensor y = Tensor::empty({n, m}, DType::kF32);
  std::vector<double> secs;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    cairn::ops::matmul(x, ws[static_cast<size_t>(r % copies)], nullptr, y);
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(secs);
}

struct MatShape {
  const char* name;
  int64_t k, m;
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  const int reps = quick ? 9 : 41;
  const double bw = cairn::ops::cpu::measure_memory_bandwidth_gbs();
  const double peak = cairn::ops::cpu::measure_f32_gemm_gflops();
  fmt::print("isa {}, threads {}\n", cairn::ops::cpu::isa_name(cairn::ops::cpu::active_isa()),
             cairn::ThreadPool::global().n_threads());
  fmt::print("memory bandwidth (copy, read+write) {:.1f} GB/s; peak f32 FMA {:.1f} GFLOP/s\n", bw,
             peak);
  const MatShape shapes[] = {
      {"q/o 896x896", 896, 896}, {"gate/up 896->4864", 896, 4864}, {"down 4864->896", 4864, 896}};
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (const MatShape& s : shapes) {
      const double t = time_matmul(1, s.k, s.m, dt, reps);
      const double bytes = static_cast<double>(s.m * s.k * (dt == DType::kF32 ? 4 : 2)) +
                           4.0 * static_cast<double>(s.k + s.m);
      fmt::print("gemv {:5} {:20} {:8.1f} us {:6.1f} GB/s  {:5.1f}% of bandwidth\n",
                 cairn::dtype_name(dt), s.name, t * 1e6, bytes / t / 1e9,
                 100 * bytes / t / 1e9 / bw);
    }
  }
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (const MatShape& s : shapes) {
      const int64_t n = 128;
      const double t = time_matmul(n, s.k, s.m, dt, quick ? 5 : 11);
      const double gflops = 2.0 * static_cast<double>(n * s.k * s.m) / t / 1e9;
      fmt::print("gemm {:5} n={} {:20} {:8.1f} ms {:6.1f} GFLOP/s  {:5.1f}% of peak\n",
                 cairn::dtype_name(dt), n, s.name, t * 1e3, gflops, 100 * gflops / peak);
    }
  }
  return 0;
}
