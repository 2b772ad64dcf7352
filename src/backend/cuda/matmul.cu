// matmul on the GPU: picks the fixed-order tensor-core GEMM (mma_gemm.cu), the GEMV kernels
// (gemv.cu) or a cuBLASLt GEMM (gemm_lt.cpp) by the batch-invariant switch, the weight and n.
// f32 weights: an f32 GEMM on f32 x. bf16/f16 weights on the GEMMs: x is rounded to the
// weights' dtype (round_input.cu) and multiplied with f32 accumulation; an x a producer already
// wrote in that dtype (ops::matmul_input_dtype) is taken as it is.
#include <atomic>
#include <cstdint>

#include "backend/cuda/add_bias.h"
#include "backend/cuda/convert.h"
#include "backend/cuda/gemm_agreement.h"
#include "backend/cuda/gemm_lt.h"
#include "backend/cuda/gemv.h"
#include "backend/cuda/matmul.h"
#include "backend/cuda/mma_gemm.h"
#include "backend/cuda/round_input.h"
#include "backend/device.h"

namespace cairn::cuda {
namespace {

std::atomic<bool> g_batch_invariant{true};

// A bias rides in cuBLASLt's epilogue when 16-byte aligned; else add_bias_rows adds it.
bool epilogue_bias(const Tensor* bias) {
  return bias && reinterpret_cast<uintptr_t>(bias->raw()) % 16 == 0;
}

// xo: the x operand (x itself for f32 weights, else its rounded copy).
GemmLtShape shape_of(const void* xo, const Tensor& w, const Tensor* bias, const Tensor& y) {
  GemmLtShape s;
  s.n = y.dim(0);
  s.m = w.dim(0);
  s.k = w.dim(1);
  s.dtype = w.dtype();
  s.bias = epilogue_bias(bias);
  const auto elem = static_cast<int64_t>(dtype_bytes(w.dtype(), 1));
  s.align_w = alignment_of(w.raw(), s.k * elem);
  s.align_x = alignment_of(xo, s.k * elem);
  s.align_y = alignment_of(y.raw(), s.m * 4);
  return s;
}

// Runs a cuBLASLt plan on x's operand xo: the bias in the epilogue when aligned, else after.
void run_plan(const GemmLtPlan* plan, const void* xo, const Tensor& w, const Tensor* bias,
              Tensor& y) {
  const bool in_epilogue = epilogue_bias(bias);
  gemm_lt_run(plan, w.raw(), xo, in_epilogue ? bias->data<float>() : nullptr, y.data<float>());
  if (bias && !in_epilogue) add_bias_rows(y.data<float>(), bias->data<float>(), y.dim(0), w.dim(0));
}

// x as the half-precision products' operand: x itself when already of w's dtype with every
// row 16-byte aligned, else round_input's rounded (or copied) x.
const void* operand_of(const Tensor& x, const Tensor& w) {
  if (x.dtype() == w.dtype() && reinterpret_cast<uintptr_t>(x.raw()) % 16 == 0 && x.dim(1) % 8 == 0)
    return x.raw();
  return round_input(x, w.dtype());
}

// The GEMV kernels read f32 x: a bf16/f16 x is widened first (exact).
void gemv_of(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y) {
  if (x.dtype() == DType::kF32) return gemv(x, w, bias, y);
  Tensor x32 = empty_on(x.device(), x.shape(), DType::kF32);
  convert(x, x32);
  gemv(x32, w, bias, y);
}

// Rows above which cuBLASLt's fixed algorithm, where it agrees, is the faster of the two (its
// tensor-core rate is about twice mma_gemm's at prefill sizes; at and below, mma_gemm streams
// the weights faster; docs/performance-gpu-history.md).
constexpr int64_t kMmaMaxRows = 128;

// The invariant mode's product for weights mma_gemm supports.
void invariant_half(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y) {
  if (x.dim(0) > kMmaMaxRows) {
    // round_input's buffer is aligned with pitch k · 2 (k % 16 == 0): the class of any x. The
    // probe (first call of a class) uses that buffer too, so it is asked before x is rounded.
    GemmLtShape cls = shape_of(x.raw(), w, bias, y);
    cls.align_x = 16;
    if (lt_agrees_with_mma(cls, w, bias ? bias->data<float>() : nullptr)) {
      const void* xo = operand_of(x, w);
      const float* b = bias ? bias->data<float>() : nullptr;
      if (lt_fixed_order_run(shape_of(xo, w, bias, y), w.raw(), xo, b, y.data<float>())) return;
      return mma_gemm(xo, w, b, y);
    }
  }
  mma_gemm(operand_of(x, w), w, bias ? bias->data<float>() : nullptr, y);
}

}  // namespace

void set_batch_invariant(bool on) {
  g_batch_invariant.store(on);
}
bool batch_invariant() {
  return g_batch_invariant.load();
}

DType matmul_input_dtype(const Tensor& w) {
  return batch_invariant() && mma_gemm_supports(w) ? w.dtype() : DType::kF32;
}

// x [n, k] f32 or of w's dtype, w [m, k] f32/bf16/f16, bias [m] f32 or null, y [n, m] f32
// (checked by ops.cpp).
void matmul(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y) {
  const int64_t n = x.dim(0), m = w.dim(0), k = w.dim(1);
  if (n == 0 || m == 0) return;
  const bool invariant = batch_invariant();
  // k == 0 (y = bias or 0) and small non-invariant batches: the GEMV kernels.
  if (k == 0 || (!invariant && n <= kGemvMaxRows)) return gemv_of(x, w, bias, y);
  // Invariant mode, bf16/f16 weights whose k the tensor-core steps tile: the tensor-core GEMM
  // (one order for every n at every tile shape: small batches stream the weights), or for many
  // rows cuBLASLt's fixed algorithm where its bits are the same (gemm_agreement.h).
  if (invariant && mma_gemm_supports(w)) return invariant_half(x, w, bias, y);
  const AlgoPolicy policy =
      invariant ? AlgoPolicy::kFixedPerShapeClass : AlgoPolicy::kHeuristicPerShape;
  const void* xo = w.dtype() == DType::kF32 ? x.raw() : operand_of(x, w);
  const GemmLtPlan* plan = gemm_lt_plan(shape_of(xo, w, bias, y), policy);
  // No cuBLASLt algorithm for this shape: the GEMV kernels, whose order is fixed for every n.
  if (!plan) return gemv_of(x, w, bias, y);
  run_plan(plan, xo, w, bias, y);
}

}  // namespace cairn::cuda
