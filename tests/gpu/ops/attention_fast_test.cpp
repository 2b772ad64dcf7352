// The tensor-core attention's fast products (cuda::set_attention_fast_products: q and the
// softmax weights rounded once to the K/V dtype, no lo parts; docs/cuda.md): against the CPU op
// at the K/V dtype's precision, on the split kernel (decode, a small chunk) and the fused one
// (one key split, a prefill over five), and further from it than the exact products may be, so
// the switch is shown to be taken. Every path's bits under it: AttentionSeqsGpu's
// FastProductsKeepEveryPathsBits. Outputs poisoned.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "attention_test_util.h"
#include "backend/cuda/attention.h"
#include "backend/ops.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

struct Shape {
  int64_t n_q, n_kv, n_heads, n_kv_heads;
};

// The GPU's output's relative error against the CPU op's, under the fast or the exact products:
// n_q queries at the end of n_kv keys (key j at position j), q and K in ±2, V in ±1.
double error_against_cpu(DType dtype, int64_t hd, const Shape& s, bool fast, float softcap,
                         int32_t window) {
  std::mt19937 rng(static_cast<uint32_t>(s.n_q * 31 + s.n_kv + hd));
  const Tensor q = random_host({s.n_q, s.n_heads, hd}, DType::kF32, rng, 2.0f);
  const Tensor k = random_host({s.n_kv, s.n_kv_heads, hd}, dtype, rng, 2.0f);
  const Tensor v = random_host({s.n_kv, s.n_kv_heads, hd}, dtype, rng);
  const auto kp = iota(s.n_kv, 0);
  const auto qp = iota(s.n_q, static_cast<int32_t>(s.n_kv - s.n_q));
  const float scale = (softcap > 0.0f ? 4.0f : 1.0f) / std::sqrt(static_cast<float>(hd));
  const ops::AttentionParams p{scale, softcap, window};
  Tensor want = Tensor::empty(q.shape(), DType::kF32);
  ops::attention(q, k, v, qp, kp, p, want);
  const SwitchScope products(cuda::attention_fast_products, cuda::set_attention_fast_products,
                             fast);
  Tensor out = poisoned_device(q.shape(), DType::kF32);
  ops::attention(to_device(q), to_device(k), to_device(v), qp, kp, p, out);
  return rel_error(to_host(out), want);
}

// Bounds: q and p rounded once to bf16 (8 significant bits: relative error up to 2^-9 each) or
// f16 (11 bits: 2^-12); the logits' and the weights' errors average out over head_dim and the
// keys, so the outputs stay within DESIGN.md's bf16 bound (1e-2) and a quarter of it for f16.
// The exact products stay within 1e-5 (bf16) and 5e-6 (f16) (AttentionTensorCores's
// NearTheCpuReference): an error above those shows the lo parts are gone.
TEST(AttentionFastProducts, NearTheCpuAtTheKvDtypesPrecision) {
  CAIRN_NEED_GPU();
  const Shape shapes[] = {{1, 1000, 8, 2}, {7, 300, 8, 2}, {100, 120, 8, 2}, {600, 600, 32, 8}};
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (int64_t hd : {64, 128, 256})
      for (const Shape& s : shapes)
        for (bool capped : {false, true}) {
          const float softcap = capped ? 30.0f : 0.0f;
          const int32_t window = capped ? 16 : 0;
          const std::string what = std::string(dtype_name(dtype)) + " head_dim " +
                                   std::to_string(hd) + " n_q " + std::to_string(s.n_q) + " n_kv " +
                                   std::to_string(s.n_kv) + (capped ? " capped" : "");
          const bool bf16 = dtype == DType::kBF16;
          const double fast = error_against_cpu(dtype, hd, s, true, softcap, window);
          EXPECT_LE(fast, bf16 ? 1e-2 : 2.5e-3) << what;
          EXPECT_GT(fast, bf16 ? 1e-5 : 5e-6) << what << ": the lo parts were not dropped";
          std::printf("[fast products] %s: %.3g (exact %.3g)\n", what.c_str(), fast,
                      error_against_cpu(dtype, hd, s, false, softcap, window));
        }
}

}  // namespace
}  // namespace cairn::gpu_test
