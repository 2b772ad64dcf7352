// cuBLASLt GEMM for matmul: y[n, m] = x[n, k] · w[m, k]ᵀ (+ bias[m]), with x already in w's
// dtype (bf16/f16), or both f32. f32 accumulation; f32 GEMMs use plain f32 math (no TF32).
// Plans (descriptors and algorithm) are cached per shape; one mutex guards them.
#pragma once

#include <cstdint>
#include <tuple>

#include "core/dtype.h"

namespace cairn::cuda {

enum class AlgoPolicy : uint8_t {
  // One algorithm per shape class (m, k, dtype, bias, alignments), chosen once and used for
  // every n: a row's reduction order never depends on n.
  kFixedPerShapeClass,
  // The heuristic's best algorithm for this exact shape (n included).
  kHeuristicPerShape,
};

struct GemmLtShape {
  int64_t n = 0, m = 0, k = 0;
  DType dtype = DType::kF32;  // of w and of the x operand
  bool bias = false;
  // Elements from one row of w (and of x) to the next; 0: k. A part of k (gemm_order.h) is a
  // shape of k values at the whole product's pitch.
  int64_t pitch = 0;
  // Alignment in bytes (1..16) of each operand's start and leading dimension.
  uint32_t align_w = 16, align_x = 16, align_y = 16;
};

// A shape without n: what one fixed algorithm serves (m, k, dtype, bias, alignments, pitch).
using GemmLtClass =
    std::tuple<int64_t, int64_t, DType, bool, uint32_t, uint32_t, uint32_t, int64_t>;
GemmLtClass gemm_lt_class(const GemmLtShape& s);

struct GemmLtPlan;

// The plan for `s`, or nullptr when no cuBLASLt algorithm applies (under kFixedPerShapeClass:
// the class has none, or its algorithm fails cublasLtMatmulAlgoCheck at this n).
const GemmLtPlan* gemm_lt_plan(const GemmLtShape& s, AlgoPolicy policy);

// Launches the plan on stream(). w [m, k], x [n, k] in plan's dtype (rows `pitch` apart);
// bias [m] f32 or null (as planned); y [n, m] f32, overwritten, or when `accumulate` added to
// (y = y + product: beta 1, one rounding of the sum).
void gemm_lt_run(const GemmLtPlan* plan, const void* w, const void* x, const float* bias, float* y,
                 bool accumulate = false);

// Bytes-alignment (capped at 16) of a pointer and a row pitch together.
uint32_t alignment_of(const void* p, int64_t row_bytes);

}  // namespace cairn::cuda
