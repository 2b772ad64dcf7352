// Inputs of the GPU communicator tests: per-rank partials whose sum depends on the order of
// addition (large terms that cancel beside small ones), and their sum in rank order as the
// in-process group adds it.
#pragma once

#include <random>
#include <vector>

#include "core/tensor.h"

namespace cairn::gpu_test {

// [n_ranks, count] f32 on the host.
inline Tensor partials(int n_ranks, int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensor t = Tensor::empty({n_ranks, count}, DType::kF32);
  for (int r = 0; r < n_ranks; ++r)
    for (int64_t i = 0; i < count; ++i)
      t.data<float>()[r * count + i] = u(rng) * (r % 2 ? 1.0f : 1e7f);
  return t;
}

// The rows of p added in rank order (reverse: the other way round).
inline std::vector<float> host_sum(const Tensor& p, bool reverse) {
  const int64_t n = p.dim(0), count = p.dim(1);
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    float s = p.data<float>()[(reverse ? n - 1 : 0) * count + i];
    for (int64_t k = 1; k < n; ++k) s += p.data<float>()[(reverse ? n - 1 - k : k) * count + i];
    out[static_cast<size_t>(i)] = s;
  }
  return out;
}

inline std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

}  // namespace cairn::gpu_test
