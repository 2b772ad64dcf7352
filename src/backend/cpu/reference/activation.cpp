#include <cmath>

#include "backend/cpu/reference/reference.h"

namespace cairn::ops::ref {

float silu(float g) {
  return static_cast<float>(g / (1.0 + std::exp(-static_cast<double>(g))));
}

// 0.5 g (1 + tanh u), u = √(2/π) (g + 0.044715 g³), as HF's gelu_pytorch_tanh;
// computed as g / (1 + e^{-2u}), the same value without the cancellation of
// 1 + tanh u for very negative g.
float gelu_tanh(float g) {
  const double x = g;
  const double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
  return static_cast<float>(x / (1.0 + std::exp(-2.0 * u)));
}

void gated_activation(const Tensor& gate, const Tensor& up, Activation act, Tensor& out) {
  const int64_t n = gate.numel();
  const float* g = gate.data<float>();
  const float* u = up.data<float>();
  float* o = out.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float a = act == Activation::kSilu ? silu(g[i]) : gelu_tanh(g[i]);
    o[i] = a * u[i];
  }
}

void gated_activation_fused(const Tensor& gate_up, Activation act, Tensor& out) {
  const int64_t n = out.dim(0), f = out.dim(1);
  for (int64_t i = 0; i < n; ++i) {
    const float* g = gate_up.data<float>() + i * 2 * f;
    float* o = out.data<float>() + i * f;
    for (int64_t j = 0; j < f; ++j) {
      const float a = act == Activation::kSilu ? silu(g[j]) : gelu_tanh(g[j]);
      o[j] = a * g[f + j];
    }
  }
}

void add(const Tensor& a, const Tensor& b, Tensor& y) {
  const int64_t n = a.numel();
  for (int64_t i = 0; i < n; ++i) y.data<float>()[i] = a.data<float>()[i] + b.data<float>()[i];
}

void scale(Tensor& x, float s) {
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) x.data<float>()[i] *= s;
}

void softcap(Tensor& x, float cap) {
  const int64_t n = x.numel();
  float* d = x.data<float>();
  for (int64_t i = 0; i < n; ++i)
    d[i] = static_cast<float>(cap * std::tanh(static_cast<double>(d[i]) / cap));
}

}  // namespace cairn::ops::ref
