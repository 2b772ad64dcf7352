// CPU op benchmark: GEMV (decode) in GB/s against the measured memory
// bandwidth, GEMM (prefill) in GFLOP/s against the measured peak FMA rate.
// The machine is shared and noisy, so each round measures its limit right
// before the op, and the figures printed are medians over rounds of the
// achieved rate, of the limit, and of their ratio. Weights rotate over copies
// totalling more than the last-level cache, so GEMV reads them from memory.
//   cairn_ops_bench [--quick] [--threads N] [--isa scalar|avx2|avx512] [--only gemv|gemm]
//                   [--rows N]  (GEMM rows, default 128; 16: a 16-sequence decode step)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
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

// x [n, k] times rotating copies of w [m, k] (≥ 256 MiB in all).
class MatmulCase {
 public:
  MatmulCase(int64_t n, int64_t k, int64_t m, DType dt)
      : x_(filled({n, k}, DType::kF32, 99)), y_(Tensor::empty({n, m}, DType::kF32)) {
    const int64_t copies = std::max<int64_t>(1, (int64_t{256} << 20) / (m * k * bytes_of(dt)));
    for (int64_t c = 0; c < copies; ++c) ws_.push_back(filled({m, k}, dt, uint32_t(c)));
  }
  static int64_t bytes_of(DType dt) { return dt == DType::kF32 ? 4 : 2; }
  // Median seconds of `reps` calls.
  double seconds(int reps) {
    std::vector<double> secs;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      cairn::ops::matmul(x_, ws_[next_++ % ws_.size()], nullptr, y_);
      secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return median(secs);
  }

 private:
  Tensor x_, y_;
  std::vector<Tensor> ws_;
  size_t next_ = 0;
};

struct MatShape {
  const char* name;
  int64_t k, m;
};

const MatShape kShapes[] = {
    {"q/o 896x896", 896, 896}, {"gate/up 896->4864", 896, 4864}, {"down 4864->896", 4864, 896}};

void bench_gemv(DType dt, const MatShape& s, int rounds) {
  MatmulCase c(1, s.k, s.m, dt);
  const double bytes = double(s.m * s.k * MatmulCase::bytes_of(dt)) + 4.0 * double(s.k + s.m);
  std::vector<double> got, limit, ratio;
  for (int r = 0; r < rounds; ++r) {
    limit.push_back(cairn::ops::cpu::measure_memory_bandwidth_gbs(size_t{128} << 20, 1));
    got.push_back(bytes / c.seconds(15) / 1e9);
    ratio.push_back(got.back() / limit.back());
  }
  fmt::print("gemv {:5} {:18} {:6.1f} GB/s of {:5.1f} GB/s  {:5.1f}%\n", cairn::dtype_name(dt),
             s.name, median(got), median(limit), 100 * median(ratio));
}

void bench_gemm(DType dt, const MatShape& s, int64_t n, int rounds) {
  MatmulCase c(n, s.k, s.m, dt);
  const double flops = 2.0 * double(n * s.k * s.m);
  std::vector<double> got, limit, ratio;
  for (int r = 0; r < rounds; ++r) {
    limit.push_back(cairn::ops::cpu::measure_f32_gemm_gflops(2'000'000, 1));
    got.push_back(flops / c.seconds(3) / 1e9);
    ratio.push_back(got.back() / limit.back());
  }
  fmt::print("gemm {:5} n={} {:18} {:6.1f} GFLOP/s of {:5.1f}  {:5.1f}%\n", cairn::dtype_name(dt),
             n, s.name, median(got), median(limit), 100 * median(ratio));
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;
  int64_t gemm_rows = 128;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--threads" && i + 1 < argc) {
      cairn::ThreadPool::set_global_threads(std::stoi(argv[++i]));
    } else if (arg == "--rows" && i + 1 < argc) {
      gemm_rows = std::stoll(argv[++i]);
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--isa" && i + 1 < argc) {
      const std::string isa = argv[++i];
      cairn::ops::cpu::set_active_isa(isa == "scalar" ? cairn::ops::cpu::Isa::kScalar
                                      : isa == "avx2" ? cairn::ops::cpu::Isa::kAvx2
                                                      : cairn::ops::cpu::Isa::kAvx512);
    } else {
      fmt::print(stderr,
                 "usage: cairn_ops_bench [--quick] [--threads N] [--isa NAME] [--only gemv|gemm] "
                 "[--rows N]\n");
      return 2;
    }
  }
  const int rounds = quick ? 3 : 9;
  fmt::print("isa {}, threads {}; medians over {} rounds, each against its own limit\n",
             cairn::ops::cpu::isa_name(cairn::ops::cpu::active_isa()),
             cairn::ThreadPool::global().n_threads(), rounds);
  for (DType dt : {DType::kF32, DType::kBF16})
    for (const MatShape& s : kShapes)
      if (only != "gemm") bench_gemv(dt, s, rounds);
  for (DType dt : {DType::kF32, DType::kBF16})
    for (const MatShape& s : kShapes)
      if (only != "gemv") bench_gemm(dt, s, gemm_rows, rounds);
  return 0;
}
