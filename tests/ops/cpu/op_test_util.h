// Helpers shared by the op tests: seeded random tensors that avoid zeros, and
// error measures relative to the largest reference value.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/reference/reference.h"
#include "core/tensor.h"

namespace cairn::test {

// Values uniform in ±[0.1, 1] * magnitude, never zero; stored in `dtype`.
inline Tensor random_tensor(const Shape& shape, DType dtype, uint32_t seed, float magnitude = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mag(0.1f, 1.0f);
  Tensor t = Tensor::empty(shape, dtype);
  for (int64_t i = 0; i < t.numel(); ++i) {
    float v = mag(rng) * magnitude * ((rng() & 1) ? 1.0f : -1.0f);
    ops::ref::store_from_f32(t.raw(), dtype, i, v);
  }
  return t;
}

inline std::vector<float> to_vector(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    v[static_cast<size_t>(i)] = ops::ref::load_as_f32(t.raw(), t.dtype(), i);
  return v;
}

inline Tensor copy_of(const Tensor& t) {
  Tensor c = Tensor::empty(t.shape(), t.dtype());
  std::memcpy(c.raw(), t.raw(), t.nbytes());
  return c;
}

// max |a - b| / max |b| (b is the reference; 0 when b is all zeros and a equals it).
inline double max_rel_error(const std::vector<float>& a, const std::vector<float>& b) {
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(b[i])));
  }
  return max_ref > 0 ? max_diff / max_ref : max_diff;
}

inline double max_rel_error(const std::vector<float>& a, const std::vector<double>& b) {
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    max_ref = std::max(max_ref, std::fabs(b[i]));
  }
  return max_ref > 0 ? max_diff / max_ref : max_diff;
}

inline bool bit_equal(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

}  // namespace cairn::test

#include "backend/cpu/cpu_backend.h"

namespace cairn::test {

// Every ISA this processor can run, lowest first.
inline std::vector<ops::cpu::Isa> available_isas() {
  std::vector<ops::cpu::Isa> out;
  for (auto isa : {ops::cpu::Isa::kScalar, ops::cpu::Isa::kAvx2, ops::cpu::Isa::kAvx512})
    if (static_cast<int>(isa) <= static_cast<int>(ops::cpu::detected_isa())) out.push_back(isa);
  return out;
}

// Sets the active ISA for a scope, restoring the detected one after.
struct IsaScope {
  explicit IsaScope(ops::cpu::Isa isa) { ops::cpu::set_active_isa(isa); }
  ~IsaScope() { ops::cpu::set_active_isa(ops::cpu::detected_isa()); }
};

}  // namespace cairn::test
