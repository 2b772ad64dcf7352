// add, scale and softcap: one thread per element (pointwise.cuh). Each element
// is computed as the CPU reference computes it: an f32 add or multiply rounded
// once (no contraction), softcap in double.
#include <cmath>

#include "backend/cuda/elementwise.h"
#include "backend/cuda/pointwise.cuh"

namespace cairn::cuda {
namespace {

struct AddOp {
  __device__ float operator()(float a, float b) const { return __fadd_rn(a, b); }
};

struct ScaleOp {
  float s;
  __device__ float operator()(float x) const { return __fmul_rn(x, s); }
};

// cap · tanh(x / cap) in double, rounded once to f32.
struct SoftcapOp {
  double cap;
  __device__ float operator()(float x) const {
    return static_cast<float>(__dmul_rn(cap, tanh(__ddiv_rn(static_cast<double>(x), cap))));
  }
};

}  // namespace

void add(const Tensor& a, const Tensor& b, Tensor& y) {
  launch_binary(a.data<float>(), b.data<float>(), y.data<float>(), y.numel(), AddOp{});
}

void scale(Tensor& x, float s) {
  launch_unary(x.data<float>(), x.numel(), ScaleOp{s});
}

void softcap(Tensor& x, float cap) {
  launch_unary(x.data<float>(), x.numel(), SoftcapOp{cap});
}

}  // namespace cairn::cuda
