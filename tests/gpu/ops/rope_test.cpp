// CUDA rope against the CPU reference: half-split and interleaved pairs, partial
// rotary (dims past rotary_dim must come back untouched), attention_factor, and
// positions up to 131071; split_rope (through a prefill's angle table too) against split_columns
// (rms_norm with head norms) and rope on the GPU, bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/reference/reference.h"
#include "backend/cuda/rope_angles.h"
#include "backend/device.h"
#include "backend/ops.h"
#include "gpu_test_util.h"
#include "row_test_util.h"

namespace cairn::gpu_test {
namespace {

std::vector<float> inv_freq(int rotary_dim, double theta) {
  std::vector<float> inv;
  for (int i = 0; i < rotary_dim / 2; ++i)
    inv.push_back(static_cast<float>(std::pow(theta, -2.0 * i / rotary_dim)));
  return inv;
}

TEST(GpuRope, MatchesReference) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(41);
  std::uniform_int_distribution<int32_t> pick(0, 131071);
  const std::pair<int, int> dims[] = {{64, 64}, {80, 32},   {34, 34},  {10, 6},
                                      {2, 2},   {128, 128}, {256, 64}, {96, 96}};
  for (auto layout : {ops::RopeLayout::kHalfSplit, ops::RopeLayout::kInterleaved})
    for (auto [head_dim, rotary] : dims)
      for (float factor : {1.0f, 1.1f}) {
        const int64_t n_tokens = head_dim == 128 ? 300 : 37, n_heads = 5;
        Tensor x = random_host({n_tokens, n_heads, head_dim}, DType::kF32, rng, 3.0f);
        std::vector<int32_t> pos = {0, 1, 131071};
        while (static_cast<int64_t>(pos.size()) < n_tokens) pos.push_back(pick(rng));
        const std::vector<float> inv = inv_freq(rotary, 500000.0);
        const ops::RopeParams p{inv, rotary, layout, factor};
        Tensor ref = Tensor::empty(x.shape(), DType::kF32);
        std::copy_n(x.data<float>(), x.numel(), ref.data<float>());
        ops::ref::rope(ref, pos, p);
        Tensor xd = to_device(x);
        ops::rope(xd, pos, p);
        Tensor got = to_host(xd);
        EXPECT_LE(rel_error(got, ref), 1e-5)
            << "head_dim " << head_dim << " rotary " << rotary << " factor " << factor;
        int64_t moved = 0;  // pass-through dims that changed
        for (int64_t r = 0; r < n_tokens * n_heads; ++r)
          for (int64_t c = rotary; c < head_dim; ++c)
            moved += got.data<float>()[r * head_dim + c] != x.data<float>()[r * head_dim + c];
        EXPECT_EQ(moved, 0) << "head_dim " << head_dim << " rotary " << rotary;
      }
}

TEST(GpuRope, SplitRopeEqualsTheSplitThenRope) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(43);
  FusedInputsScope fused(true);  // the fused kernel, not ops.cpp's split then rope
  // {12, 12}: pairs in whole float4s when interleaved only
  const std::pair<int, int> dims[] = {{64, 64}, {80, 32}, {10, 6}, {128, 128}, {256, 64}, {12, 12}};
  // 37 tokens (a block row a token), and a prefill's 300 (the angle table's path where the
  // sizes allow it)
  for (const int64_t n : {int64_t{37}, cuda::kAngleTableMinTokens + 44})
    for (auto layout : {ops::RopeLayout::kHalfSplit, ops::RopeLayout::kInterleaved})
      for (auto [head_dim, rotary] : dims) {
        const int64_t h_q = 6, h_kv = 2;
        const int64_t width = (h_q + 2 * h_kv) * head_dim;
        const Tensor qkv = to_device(random_host({n, width}, DType::kF32, rng, 3.0f));
        std::vector<int32_t> pos;
        for (int64_t t = 0; t < n; ++t) pos.push_back(static_cast<int32_t>(t * 3541 % 131072));
        const std::vector<float> inv = inv_freq(rotary, 500000.0);
        const ops::RopeParams p{inv, rotary, layout, 1.0f};
        const Device d{DeviceKind::kCuda, 0};
        Tensor q = poisoned_device({n, h_q, head_dim}, DType::kF32);
        Tensor k = poisoned_device({n, h_kv, head_dim}, DType::kF32);
        Tensor v = poisoned_device({n, h_kv, head_dim}, DType::kF32);
        ops::split_rope(qkv, pos, p, q, k, v);
        Tensor q2 = empty_on(d, {n, h_q * head_dim}, DType::kF32);
        Tensor k2 = empty_on(d, {n, h_kv * head_dim}, DType::kF32);
        Tensor v2 = empty_on(d, {n, h_kv * head_dim}, DType::kF32);
        std::vector<Tensor*> parts = {&q2, &k2, &v2};
        ops::split_columns(qkv, parts);
        Tensor q3 = q2.reshape({n, h_q, head_dim}), k3 = k2.reshape({n, h_kv, head_dim});
        ops::rope(q3, pos, p);
        ops::rope(k3, pos, p);
        const std::string at = " of " + std::to_string(n) + " tokens, head_dim " +
                               std::to_string(head_dim) + " rotary " + std::to_string(rotary);
        EXPECT_TRUE(bit_equal(to_host(q), to_host(q3))) << "q" << at;
        EXPECT_TRUE(bit_equal(to_host(k), to_host(k3))) << "k" << at;
        EXPECT_TRUE(bit_equal(to_host(v), to_host(v2.reshape({n, h_kv, head_dim})))) << "v" << at;
      }
}

// With head norms (q_norm, k_norm: Qwen3, Gemma 3): a warp a head emulating rms_norm's
// 256-thread order, at head_dim 64 to 1,024 (1, 2, 8 chunks of 32 groups), q alone, k alone or
// both, against split_columns, rms_norm over the head rows and rope on the GPU, bit for bit, at 19
// tokens (the per-token blocks) and 300 (the angle table's kernel).
TEST(GpuRope, SplitRopeWithHeadNormsEqualsTheOpsItFuses) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(47);
  FusedInputsScope fused(true);
  const std::pair<int, int> dims[] = {{64, 64},   {128, 128}, {128, 64},
                                      {256, 256}, {80, 32},   {1024, 128}};
  const Device d{DeviceKind::kCuda, 0};
  for (auto [head_dim, rotary] : dims)
    for (int which = 1; which <= 6; ++which) {  // 1: q, 2: k, 3: both; then each at 300 tokens
      const int normed = which > 3 ? which - 3 : which;
      const auto layout = normed == 2 ? ops::RopeLayout::kInterleaved : ops::RopeLayout::kHalfSplit;
      // 19 tokens: a block row a token; 300: the angle table's warp a head row
      const int64_t n = which > 3 ? 300 : 19, h_q = 6, h_kv = 2;
      const int64_t width = (h_q + 2 * h_kv) * head_dim;
      const Tensor qkv = to_device(random_host({n, width}, DType::kF32, rng, 3.0f));
      const Tensor qw = to_device(random_host({head_dim}, DType::kF32, rng, 2.0f));
      const Tensor kw = to_device(random_host({head_dim}, DType::kF32, rng, 2.0f));
      std::vector<int32_t> pos;
      for (int64_t t = 0; t < n; ++t) pos.push_back(static_cast<int32_t>(t * 7919 % 131072));
      const std::vector<float> inv = inv_freq(rotary, 1000000.0);
      const ops::RopeParams p{inv, rotary, layout, 1.0f};
      const ops::HeadNorms norms{normed & 1 ? &qw : nullptr, normed & 2 ? &kw : nullptr, 1e-6f};
      Tensor q = poisoned_device({n, h_q, head_dim}, DType::kF32);
      Tensor k = poisoned_device({n, h_kv, head_dim}, DType::kF32);
      Tensor v = poisoned_device({n, h_kv, head_dim}, DType::kF32);
      ops::split_rope(qkv, pos, p, q, k, v, norms);
      Tensor q2 = empty_on(d, {n, h_q * head_dim}, DType::kF32);
      Tensor k2 = empty_on(d, {n, h_kv * head_dim}, DType::kF32);
      Tensor v2 = empty_on(d, {n, h_kv * head_dim}, DType::kF32);
      std::vector<Tensor*> parts = {&q2, &k2, &v2};
      ops::split_columns(qkv, parts);
      Tensor q_rows = q2.reshape({n * h_q, head_dim}), k_rows = k2.reshape({n * h_kv, head_dim});
      if (norms.q) ops::rms_norm(q_rows, qw, 1e-6f, q_rows);
      if (norms.k) ops::rms_norm(k_rows, kw, 1e-6f, k_rows);
      Tensor q3 = q2.reshape({n, h_q, head_dim}), k3 = k2.reshape({n, h_kv, head_dim});
      ops::rope(q3, pos, p);
      ops::rope(k3, pos, p);
      const std::string at = "head_dim " + std::to_string(head_dim) + ", norms " +
                             std::to_string(normed) + ", " + std::to_string(n) + " tokens";
      EXPECT_TRUE(bit_equal(to_host(q), to_host(q3))) << "q, " << at;
      EXPECT_TRUE(bit_equal(to_host(k), to_host(k3))) << "k, " << at;
      EXPECT_TRUE(bit_equal(to_host(v), to_host(v2.reshape({n, h_kv, head_dim})))) << "v, " << at;
    }
}

TEST(GpuRope, NoTokensIsANoOp) {
  CAIRN_NEED_GPU();
  Tensor x = empty_on({DeviceKind::kCuda, 0}, {0, 4, 8}, DType::kF32);
  const std::vector<float> inv = inv_freq(8, 10000.0);
  EXPECT_NO_THROW(ops::rope(x, {}, ops::RopeParams{inv, 8, ops::RopeLayout::kHalfSplit, 1.0f}));
}

}  // namespace
}  // namespace cairn::gpu_test
