#include "backend/cpu/machine_limits.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/fast/kernels.h"
#include "core/median.h"
#include "core/storage.h"
#include "core/thread_pool.h"

namespace cairn::ops::cpu {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

constexpr int kRuns = 5;

}  // namespace

double measure_memory_bandwidth_gbs() {
  return measure_memory_bandwidth_gbs(size_t{256} << 20, kRuns);
}

double measure_f32_gemm_gflops() {
  return measure_f32_gemm_gflops(20'000'000, kRuns);
}

double measure_memory_bandwidth_gbs(size_t bytes, int runs) {
  auto src = allocate_host(bytes);
  auto dst = allocate_host(bytes);
  std::memset(src->data(), 1, bytes);  // touch every page before timing
  std::memset(dst->data(), 0, bytes);
  ThreadPool& pool = ThreadPool::global();
  constexpr int64_t kChunks = 64;
  std::vector<double> gbs;
  for (int run = 0; run < runs; ++run) {
    auto t0 = std::chrono::steady_clock::now();
    pool.parallel_for(kChunks, [&](int64_t b, int64_t e) {
      const size_t chunk = bytes / kChunks;
      std::memcpy(static_cast<char*>(dst->data()) + b * chunk,
                  static_cast<const char*>(src->data()) + b * chunk, chunk * (e - b));
    });
    gbs.push_back(2.0 * bytes / seconds_since(t0) / 1e9);
  }
  return median(gbs);
}

double measure_f32_gemm_gflops(int64_t iters, int runs) {
  const Isa isa = active_isa();
  ThreadPool& pool = ThreadPool::global();
  std::vector<double> gflops;
  for (int run = 0; run < runs; ++run) {
    std::vector<double> flops(static_cast<size_t>(pool.n_threads()), 0.0);
    auto t0 = std::chrono::steady_clock::now();
    pool.parallel_for(pool.n_threads(), [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t)
        flops[static_cast<size_t>(t)] = isa == Isa::kAvx512 ? fast::fma_peak_avx512(iters)
                                        : isa == Isa::kAvx2 ? fast::fma_peak_avx2(iters)
                                                            : fast::fma_peak_scalar(iters / 8);
    });
    double total = 0;
    for (double f : flops) total += f;
    gflops.push_back(total / seconds_since(t0) / 1e9);
  }
  return median(gflops);
}

}  // namespace cairn::ops::cpu
