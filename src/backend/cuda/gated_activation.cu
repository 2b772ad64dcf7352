// out = act(gate) · up, one thread per element (pointwise.cuh). The activation
// is computed in double as the CPU reference does (SiLU g / (1 + e^-g); GELU
// tanh form as g / (1 + e^-2u), u = √(2/π)(g + 0.044715 g³)), rounded once to
// f32, then multiplied by up in f32. out may be bf16/f16: that f32 rounded as it is stored
// (rounded_store.cuh).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backend/cuda/gated_activation.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/pointwise.cuh"
#include "backend/cuda/rounded_store.cuh"

namespace cairn::cuda {
namespace {

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

// out row r = op(gate_up row r's first half, its second half): rows over blockIdx.y, columns
// (float4 when w4, i.e. the halves' width is a multiple of 4) over the x blocks' threads.
template <typename Op, typename TO>
__global__ void halves_kernel(const float* gate_up, TO* out, int64_t rows, int64_t f, bool w4,
                              Op op) {
  pdl_enter();
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const float* g = gate_up + r * 2 * f;
    TO* o = out + r * f;
    if (w4) {
      const float4 *g4 = reinterpret_cast<const float4*>(g), *u4 = g4 + f / 4;
      for (int64_t j = first; j < f / 4; j += step) {
        const float4 a = g4[j], b = u4[j];
        const float v[4] = {op(a.x, b.x), op(a.y, b.y), op(a.z, b.z), op(a.w, b.w)};
        store_group4_as(o, j, f, true, v);
      }
    } else {
      for (int64_t j = first; j < f; j += step) o[j] = rounded<TO>(op(g[j], g[f + j]));
    }
  }
}

// out[i] = op(gate[i], up[i]) stored as TO (the split form's rounded outputs; f32 outputs take
// pointwise.cuh's launch_binary).
template <typename Op, typename TO>
__global__ void rounded_binary_kernel(const float* gate, const float* up, TO* out, int64_t n,
                                      Op op) {
  pdl_enter();
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = rounded<TO>(op(gate[i], up[i]));
}

template <typename Op, typename TO>
void launch_halves(const Tensor& gate_up, TO* out, int64_t rows, int64_t f, Op op) {
  const bool w4 = f % 4 == 0 && reinterpret_cast<uintptr_t>(gate_up.raw()) % 16 == 0 &&
                  reinterpret_cast<uintptr_t>(out) % 16 == 0;
  const unsigned x = std::min<unsigned>(blocks_for(w4 ? f / 4 : f), 64u);
  const dim3 grid(x, static_cast<unsigned>(std::min<int64_t>(rows, 65535)));
  launch_kernel("halves_kernel", halves_kernel<Op, TO>, grid, kBlock, 0, gate_up.data<float>(), out,
                rows, f, w4, op);
}

template <typename Op>
void halves_of(const Tensor& gate_up, Tensor& out, Op op) {
  const int64_t rows = out.dim(0), f = out.dim(1);
  if (out.dtype() == DType::kBF16)
    launch_halves(gate_up, static_cast<__nv_bfloat16*>(out.raw()), rows, f, op);
  else if (out.dtype() == DType::kF16)
    launch_halves(gate_up, static_cast<__half*>(out.raw()), rows, f, op);
  else
    launch_halves(gate_up, out.data<float>(), rows, f, op);
}

template <typename Op>
void binary_of(const Tensor& gate, const Tensor& up, Tensor& out, Op op) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const float *g = gate.data<float>(), *u = up.data<float>();
  if (out.dtype() == DType::kF32) return launch_binary(g, u, out.data<float>(), n, op);
  if (out.dtype() == DType::kBF16)
    launch_kernel("rounded_binary_kernel", rounded_binary_kernel<Op, __nv_bfloat16>,
                  pointwise_grid(n), kBlock, 0, g, u, static_cast<__nv_bfloat16*>(out.raw()), n,
                  op);
  else
    launch_kernel("rounded_binary_kernel", rounded_binary_kernel<Op, __half>, pointwise_grid(n),
                  kBlock, 0, g, u, static_cast<__half*>(out.raw()), n, op);
}

}  // namespace

void gated_activation_fused(const Tensor& gate_up, ops::Activation act, Tensor& out) {
  if (out.numel() == 0) return;
  if (act == ops::Activation::kSilu)
    halves_of(gate_up, out, SiluGate{});
  else
    halves_of(gate_up, out, GeluTanhGate{});
}

void gated_activation(const Tensor& gate, const Tensor& up, ops::Activation act, Tensor& out) {
  if (act == ops::Activation::kSilu)
    binary_of(gate, up, out, SiluGate{});
  else
    binary_of(gate, up, out, GeluTanhGate{});
}

}  // namespace cairn::cuda
