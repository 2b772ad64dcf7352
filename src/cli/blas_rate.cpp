#include "cli/blas_rate.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "backend/cpu/cpu_backend.h"

namespace cairn {
namespace {

// cblas_sgemm's signature with its enums as ints (row major 101, no transpose 111, transpose
// 112), so that no BLAS header is needed to build.
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                       float, float*, int);
using SetThreads = void (*)(int);

struct Blas {
  Sgemm sgemm = nullptr;
  SetThreads set_threads = nullptr;
};

// OpenBLAS, opened at first use. Its kernels are chosen when the library loads, from the CPU
// model, which a virtual machine may hide (0.3.21 then takes its generic SSE3 kernels, a fifth
// of the rate): unless OPENBLAS_CORETYPE is set, it is set first to the kernels of the ISA
// cairn itself runs (AVX-512: SkylakeX, AVX2: Haswell).
const Blas& blas() {
  static const Blas b = [] {
    Blas out;
    const ops::cpu::Isa isa = ops::cpu::active_isa();
    if (isa == ops::cpu::Isa::kAvx512)
      setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
    else if (isa == ops::cpu::Isa::kAvx2)
      setenv("OPENBLAS_CORETYPE", "Haswell", 0);
    void* lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return out;
    out.sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "cblas_sgemm"));
    out.set_threads = reinterpret_cast<SetThreads>(dlsym(lib, "openblas_set_num_threads"));
    return out;
  }();
  return b;
}

}  // namespace

double measure_blas_sgemm_gflops(int64_t m, int64_t n, int64_t k, int threads) {
  const Blas& b = blas();
  if (!b.sgemm) return 0.0;
  if (b.set_threads) b.set_threads(threads);
  std::vector<float> x(static_cast<size_t>(m * k)), w(static_cast<size_t>(n * k)),
      y(static_cast<size_t>(m * n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.125f - 0.375f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5) * 0.0625f - 0.125f;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  auto run = [&] {
    b.sgemm(101, 111, 112, mi, ni, ki, 1.0f, x.data(), ki, w.data(), ki, 0.0f, y.data(), ni);
  };
  run();  // warm-up: threads started, pages touched
  std::vector<double> gflops;
  for (int r = 0; r < 11; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gflops.push_back(2.0 * static_cast<double>(m * n * k) / s / 1e9);
  }
  std::sort(gflops.begin(), gflops.end());
  return gflops[gflops.size() / 2];
}

}  // namespace cairn
