// Helpers of the GPU sample_rows tests: random logits of several shapes of
// distribution, random rows of parameters, the op run on the CPU (the
// reference) and on the GPU, and the one excuse a sampled row has for
// differing from the CPU: a boundary within rounding (f32 masses on the GPU,
// double on the CPU) of u, of the top-p threshold or of the min-p floor.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "backend/device.h"
#include "backend/ops.h"
#include "backend/philox.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {

// kConstant, all of a row one value, is left out of mixed rows: with top-p its
// nucleus ends exactly at the threshold, where the CPU's double sums fall on
// either side by rounding (TiesAndNarrowRowsAtFullVocabulary covers it).
enum class Logits { kNormal, kPeaked, kTies, kNarrow, kMasked, kConstant };
constexpr int kMixedKinds = 5;

// n rows of vocab logits of `kind`, or when mixed, row i of kind (kind + i) % kMixedKinds.
inline Tensor make_logits(int64_t n, int64_t vocab, std::mt19937& rng, Logits kind, bool mixed) {
  Tensor t = Tensor::empty({n, vocab}, DType::kF32);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_real_distribution<float> ud(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    const auto k = mixed ? static_cast<Logits>((static_cast<int>(kind) + i) % kMixedKinds) : kind;
    float* row = t.data<float>() + i * vocab;
    for (int64_t j = 0; j < vocab; ++j) {
      const float z = nd(rng);
      switch (k) {
        case Logits::kNormal:
          row[j] = 3.0f * z;
          break;
        case Logits::kPeaked:
          row[j] = z + (ud(rng) < 0.002f ? 12.0f * ud(rng) : 0.0f);
          break;
        case Logits::kTies:
          row[j] = std::round(2.0f * z) * 0.5f;
          break;  // many equal values
        case Logits::kNarrow:
          row[j] = ud(rng) < 1e-3f ? -25.0f : 1e-3f * ud(rng);
          break;
        case Logits::kMasked:
          row[j] = ud(rng) < 0.3f ? -INFINITY : 4.0f * z;
          break;
        case Logits::kConstant:
          row[j] = 0.75f;
          break;
      }
    }
  }
  return t;
}

// Random parameters: greedy one time in six, else cuts drawn independently.
inline ops::SampleRow random_row(std::mt19937& rng, int32_t n_top_max) {
  ops::SampleRow r;
  auto pick = [&](auto... v) {
    const auto all = {v...};
    return *(all.begin() + rng() % all.size());
  };
  r.temperature = rng() % 6 == 0 ? 0.0f : pick(0.3f, 0.7f, 1.0f, 1.3f, 2.0f);
  r.top_k = pick(0, 0, 1, 5, 50, 5000);
  r.top_p = pick(1.0f, 1.0f, 0.95f, 0.8f, 0.5f);
  r.min_p = pick(0.0f, 0.0f, 0.02f, 0.1f);
  r.seed = rng(), r.step = rng() % 4096;
  r.n_top = std::min(n_top_max, pick(-1, 0, 3, 20));
  return r;
}

struct Sampled {
  std::vector<int32_t> ids;
  std::vector<float> lps;
  std::vector<int32_t> top_ids;  // [n, width]
  std::vector<float> top_lps;
  Tensor logits;  // after the processors (host)
};

inline Tensor host_copy(const Tensor& t) {
  Tensor c = Tensor::empty(t.shape(), t.dtype());
  std::memcpy(c.raw(), t.raw(), t.nbytes());
  return c;
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  const Tensor h = t.device().kind == DeviceKind::kCpu ? t : to_host(t);
  return std::vector<T>(h.data<T>(), h.data<T>() + h.numel());
}

// The op over a copy of host logits on `device`, outputs there too or on the host.
inline Sampled sample_on(DeviceKind device, const Tensor& logits,
                         std::span<const ops::SampleRow> rows, int64_t width,
                         bool device_outputs = false) {
  const int64_t n = logits.dim(0);
  const bool gpu = device == DeviceKind::kCuda;
  Tensor l = gpu ? to_device(logits) : host_copy(logits);
  auto make = [&](const Shape& s, DType d) {
    return gpu && device_outputs ? poisoned_device(s, d) : Tensor::empty(s, d);
  };
  Tensor ids = make({n}, DType::kI32), lps = make({n}, DType::kF32);
  Tensor top_ids = make({n, width}, DType::kI32), top_lps = make({n, width}, DType::kF32);
  ops::sample_rows(l, rows, {&ids, &lps, &top_ids, &top_lps});
  return {values<int32_t>(ids), values<float>(lps), values<int32_t>(top_ids),
          values<float>(top_lps), gpu ? to_host(l) : l};
}

// The CPU's view of a sampled row: candidates by s descending (ties by id),
// probabilities in double over those top-k keeps.
inline bool near_boundary(std::span<const float> row, const ops::SampleRow& r, double tol = 2e-6) {
  const float inv_t = 1.0f / r.temperature;
  std::vector<std::pair<float, int32_t>> c;
  for (size_t i = 0; i < row.size(); ++i) c.push_back({-(row[i] * inv_t), static_cast<int32_t>(i)});
  std::sort(c.begin(), c.end());
  if (r.top_k > 0 && static_cast<size_t>(r.top_k) < c.size())
    c.resize(static_cast<size_t>(r.top_k));
  std::vector<double> p(c.size());
  double sum = 0;
  for (size_t i = 0; i < c.size(); ++i)
    sum += p[i] = std::exp(double(-c[i].first) + double(c[0].first));
  size_t n = c.size();
  double cum = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    cum += p[i] / sum;
    if (r.top_p < 1.0f && std::fabs(cum - r.top_p) < tol) return true;
    if (r.top_p < 1.0f && cum >= r.top_p && n == c.size()) n = i + 1;
  }
  for (size_t i = 1; r.min_p > 0.0f && i < n; ++i) {
    if (std::fabs(p[i] / p[0] - r.min_p) < tol) return true;
    if (p[i] / p[0] < r.min_p) n = i;
  }
  double total = 0;
  for (size_t i = 0; i < n; ++i) total += p[i];
  const double u = philox_uniform(r.seed, r.step);
  cum = 0;
  for (size_t i = 0; i < n; ++i)
    if (std::fabs((cum += p[i]) / total - u) < tol) return true;
  return false;
}

}  // namespace cairn::gpu_test
