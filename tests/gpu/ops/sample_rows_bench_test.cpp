// sample_rows' time per decode step at 128 rows × 128256 (Llama-3's vocabulary)
// for the common settings, against the time to read the logits once at the
// measured copy bandwidth (a pass of the op reads every row once; the full-vocab
// draw takes three passes). Disabled by default (it asserts nothing):
//   gpu_ops_test --gtest_also_run_disabled_tests --gtest_filter='*SampleRowsBench*'
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "backend/cuda/limits.h"
#include "sample_rows_util.h"

namespace cairn::gpu_test {
namespace {

struct Setting {
  const char* name;
  float temperature;
  int32_t top_k;
  float top_p;
  int32_t n_top;
};

TEST(GpuSampleRowsBench, DISABLED_MicrosecondsPerStep) {
  CAIRN_NEED_GPU();
  const int64_t n = 128, vocab = 128256;
  std::mt19937 rng(1);
  const Tensor host = make_logits(n, vocab, rng, Logits::kPeaked, false);
  Tensor logits = to_device(host);
  // Bytes read plus bytes written per second: the memory's whole traffic, which
  // a pass that only reads can use for reading.
  const double copy_gbs = cuda::measure_copy_bandwidth_gbs();
  const double bytes = double(n) * vocab * 4;
  std::printf(
      "sample_rows %lld x %lld: logits %.1f MB; copy bandwidth %.0f GB/s, so one read "
      "of them takes %.1f us\n",
      static_cast<long long>(n), static_cast<long long>(vocab), bytes / 1e6, copy_gbs,
      bytes / (copy_gbs * 1e9) * 1e6);
  const Setting settings[] = {{"greedy, no logprobs", 0.0f, 0, 1.0f, -1},
                              {"greedy, logprob", 0.0f, 0, 1.0f, 0},
                              {"T=1 full vocabulary", 1.0f, 0, 1.0f, -1},
                              {"T=1 full vocabulary, 5 top", 1.0f, 0, 1.0f, 5},
                              {"T=0.7 top_k=50 top_p=0.9, 5 top", 0.7f, 50, 0.9f, 5},
                              {"T=1 top_p=0.95", 1.0f, 0, 0.95f, 0}};
  for (const Setting& s : settings) {
    std::vector<ops::SampleRow> rows(static_cast<size_t>(n));
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i].temperature = s.temperature, rows[i].top_k = s.top_k, rows[i].top_p = s.top_p;
      rows[i].n_top = s.n_top, rows[i].seed = 1000 + i, rows[i].step = 7;
    }
    for (bool on_device : {true, false}) {
      auto make = [&](const Shape& sh, DType d) {
        return on_device ? empty_on({DeviceKind::kCuda, 0}, sh, d) : Tensor::empty(sh, d);
      };
      Tensor ids = make({n}, DType::kI32), lps = make({n}, DType::kF32);
      Tensor top = make({n, 5}, DType::kI32), top_lps = make({n, 5}, DType::kF32);
      const double ms = cuda::median_ms(30, [&] {
        ops::sample_rows(logits, rows, {&ids, &lps, &top, &top_lps});
      });
      const double gbs = bytes / (ms * 1e-3) / 1e9;
      std::printf("  %-34s %-12s %8.1f us/step  %6.0f GB/s of logits (%.2f reads at copy speed)\n",
                  s.name, on_device ? "(device)" : "(host out)", ms * 1e3, gbs,
                  ms * 1e-3 / (bytes / (copy_gbs * 1e9)));
    }
  }
}

}  // namespace
}  // namespace cairn::gpu_test
