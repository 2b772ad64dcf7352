// Helpers of the GPU attention tests: key positions, and one sequence's
// causal attention computed in chunks of queries (each chunk over the keys up
// to its last query), as a prefill split into chunks would.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "backend/ops.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {

inline std::vector<int32_t> iota(int64_t n, int32_t start) {
  std::vector<int32_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + static_cast<int32_t>(i));
  return v;
}

// q [n, heads, hd], k/v [n, kv heads, hd] on the device, key j at positions[j]
// and query i at positions[i]; the output (host) of every chunk into one
// poisoned tensor.
inline Tensor attention_in_chunks(const Tensor& q, const Tensor& k, const Tensor& v,
                                  std::span<const int32_t> positions, const ops::AttentionParams& p,
                                  int64_t chunk) {
  const int64_t n = q.dim(0);
  Tensor out = poisoned_device(q.shape(), DType::kF32);
  for (int64_t b = 0; b < n; b += chunk) {
    const int64_t e = std::min(n, b + chunk);
    Tensor o = out.slice_rows(b, e);
    ops::attention(q.slice_rows(b, e), k.slice_rows(0, e), v.slice_rows(0, e),
                   positions.subspan(static_cast<size_t>(b), static_cast<size_t>(e - b)),
                   positions.subspan(0, static_cast<size_t>(e)), p, o);
  }
  return to_host(out);
}

}  // namespace cairn::gpu_test
