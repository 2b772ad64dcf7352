// CUDA gated_activation (SiLU, GELU tanh) against the CPU reference on awkward
// lengths (float4 body and scalar tail), gates up to ±12, and out aliasing gate; its fused
// form against it over the split halves.
#include <gtest/gtest.h>

#include <random>

#include "backend/cpu/reference/reference.h"
#include "backend/ops.h"
#include "gpu_test_util.h"
#include "row_test_util.h"

namespace cairn::gpu_test {
namespace {

const char* name(ops::Activation act) {
  return act == ops::Activation::kSilu ? "silu" : "gelu_tanh";
}

TEST(GpuGatedActivation, MatchesReference) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(51);
  for (auto act : {ops::Activation::kSilu, ops::Activation::kGeluTanh})
    for (int64_t d : {1, 3, 37, 1023, 4099}) {
      Tensor g = random_host({7, d}, DType::kF32, rng, 12.0f);
      Tensor u = random_host({7, d}, DType::kF32, rng, 2.0f);
      Tensor ref = Tensor::empty(g.shape(), DType::kF32);
      ops::ref::gated_activation(g, u, act, ref);
      Tensor gd = to_device(g);
      Tensor y = poisoned_device(g.shape(), DType::kF32);
      ops::gated_activation(gd, to_device(u), act, y);
      Tensor got = to_host(y);
      EXPECT_LE(rel_error(got, ref), 1e-5) << name(act) << " d " << d;
      ops::gated_activation(gd, to_device(u), act, gd);  // out aliases gate
      EXPECT_TRUE(bit_equal(to_host(gd), got)) << name(act) << " d " << d << " in place";
    }
}

// The fused form over a gate|up product's output equals gated_activation over its halves
// split on the device, bit for bit (float4 rows and scalar ones: odd widths; a few rows, and
// a batch's many, whose rows get few blocks and several columns a thread).
TEST(GpuGatedActivation, FusedEqualsItOverTheSplitHalves) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(52);
  for (auto act : {ops::Activation::kSilu, ops::Activation::kGeluTanh})
    for (int64_t rows : {7, 257})
      for (int64_t d : {1, 3, 37, 1024, 4099, 4100}) {
        const Tensor gu = to_device(random_host({rows, 2 * d}, DType::kF32, rng, 12.0f));
        Tensor g = poisoned_device({rows, d}, DType::kF32);
        Tensor u = poisoned_device({rows, d}, DType::kF32);
        Tensor* parts[] = {&g, &u};
        ops::split_columns(gu, parts);
        Tensor want = poisoned_device({rows, d}, DType::kF32);
        Tensor y = poisoned_device({rows, d}, DType::kF32);
        ops::gated_activation(g, u, act, want);
        ops::gated_activation_fused(gu, act, y);
        EXPECT_TRUE(bit_equal(to_host(y), to_host(want)))
            << name(act) << " rows " << rows << " d " << d;
      }
}

}  // namespace
}  // namespace cairn::gpu_test
