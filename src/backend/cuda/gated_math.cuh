// The gated activations' arithmetic (gated_activation.cu's kernels, split and fused): the
// activation computed in double as the CPU reference does (SiLU g / (1 + e^-g); GELU tanh
// form as g / (1 + e^-2u), u = √(2/π)(g + 0.044715 g³)), rounded once to f32, then multiplied by
// up in f32. One definition, so every kernel that applies one gives the same bits.
#pragma once

#include <cmath>

namespace cairn::cuda {

struct SiluGate {
  __device__ float operator()(float g, float u) const {
    const double x = g;
    const float a = static_cast<float>(__ddiv_rn(x, __dadd_rn(1.0, exp(-x))));
    return __fmul_rn(a, u);
  }
};

// Explicit roundings keep nvcc from contracting into FMAs the reference does not use.
struct GeluTanhGate {
  __device__ float operator()(float g, float u) const {
    const double x = g;
    const double cube = __dmul_rn(__dmul_rn(__dmul_rn(0.044715, x), x), x);
    const double t = __dmul_rn(0.7978845608028654, __dadd_rn(x, cube));
    const float a = static_cast<float>(__ddiv_rn(x, __dadd_rn(1.0, exp(__dmul_rn(-2.0, t)))));
    return __fmul_rn(a, u);
  }
};

}  // namespace cairn::cuda
