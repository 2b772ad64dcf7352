// Helpers of the GPU op tests: random host tensors, copies to and from the
// device, poisoned outputs (NaN bytes, so an element a kernel never wrote fails
// the comparison) and the relative error ‖a − b‖ / ‖b‖ the bounds use
// (f32 ≤ 1e-5, bf16 ≤ 1e-2).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace cairn::gpu_test {

// GTEST_SKIP()s the calling test when no CUDA device is present.
#define CAIRN_NEED_GPU()                                                     \
  do {                                                                       \
    if (!::cairn::gpu_test::gpu_present()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

bool gpu_present();

// A host tensor of `dtype` with values uniform in [-scale, scale].
Tensor random_host(const Shape& shape, DType dtype, std::mt19937& rng, float scale = 1.0f);
// A copy of host tensor t on the CUDA device, and back (synchronizing).
Tensor to_device(const Tensor& t);
Tensor to_host(const Tensor& t);
// A new device tensor filled with NaN bytes (0xFF).
Tensor poisoned_device(const Shape& shape, DType dtype);
// ‖a − b‖₂ / ‖b‖₂ over f32 host tensors; +inf if any element of a is not finite.
double rel_error(const Tensor& a, const Tensor& b);
// The sizes an environment variable lists for a benchmark, "AxB[,AxB…]" (e.g. 128x512,64x4096),
// up to the first item not of that form; `fallback` when the variable is unset.
std::vector<std::pair<int64_t, int64_t>> sizes_from_env(
    const char* name, std::vector<std::pair<int64_t, int64_t>> fallback);

// A process-wide switch set for a scope, then restored.
class SwitchScope {
 public:
  SwitchScope(bool (*get)(), void (*set)(bool), bool on) : set_(set), saved_(get()) { set(on); }
  ~SwitchScope() { set_(saved_); }
  SwitchScope(const SwitchScope&) = delete;
  SwitchScope& operator=(const SwitchScope&) = delete;

 private:
  void (*set_)(bool);
  bool saved_;
};

// The batch-invariant switch (backend/cuda/matmul.h).
struct InvariantScope : SwitchScope {
  explicit InvariantScope(bool on);
};
// The CUDA table's fused inputs (backend/cuda/cuda_ops.h).
struct FusedInputsScope : SwitchScope {
  explicit FusedInputsScope(bool on);
};

// Whether a cut k's parts run at once (backend/cuda/wgmma_stream.h).
struct JoinScope : SwitchScope {
  explicit JoinScope(bool on);
};

// The fixed-order GEMM's cut from depth `from` (backend/cuda/mma_gemm.h) for the scope's life.
class SplitScope {
 public:
  explicit SplitScope(int64_t from);
  ~SplitScope();
  SplitScope(const SplitScope&) = delete;
  SplitScope& operator=(const SplitScope&) = delete;

 private:
  int64_t saved_;
};

}  // namespace cairn::gpu_test
