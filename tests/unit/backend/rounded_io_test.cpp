// Rounded inputs and outputs on the CPU (ops.h, matmul_input_dtype): the CPU backend takes f32
// x at no cost, and when asked for bf16/f16 norm, activation or attention outputs, or given a
// bf16/f16 x, ops.cpp converts around its f32 entries: the same values as the f32 op, rounded.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "../../ops/cpu/op_test_util.h"
#include "backend/ops.h"
#include "expect_invalid.h"

namespace cairn {
namespace {

// t converted to `dtype` (nearest even).
Tensor as(const Tensor& t, DType dtype) {
  Tensor r = Tensor::empty(t.shape(), dtype);
  ops::convert(t, r);
  return r;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(RoundedIo, TheCpuTakesF32Inputs) {
  const Tensor w = test::random_tensor({8, 32}, DType::kBF16, 1);
  EXPECT_EQ(ops::matmul_input_dtype(w), DType::kF32);
}

TEST(RoundedIo, NormsAndActivationsRoundTheirF32Output) {
  const Tensor x = test::random_tensor({3, 40}, DType::kF32, 2, 3.0f);
  const Tensor r = test::random_tensor({3, 40}, DType::kF32, 3, 3.0f);
  const Tensor w = test::random_tensor({40}, DType::kF32, 4);
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    Tensor y32 = Tensor::empty({3, 40}, DType::kF32), y = Tensor::empty({3, 40}, dtype);
    ops::rms_norm(x, w, 1e-6f, y32);
    ops::rms_norm(x, w, 1e-6f, y);
    EXPECT_TRUE(same_bytes(y, as(y32, dtype))) << dtype_name(dtype);
    Tensor xa = test::copy_of(x), xb = test::copy_of(x);
    ops::add_rms_norm(xa, r, w, 1e-6f, y32);
    ops::add_rms_norm(xb, r, w, 1e-6f, y);
    EXPECT_TRUE(same_bytes(y, as(y32, dtype))) << dtype_name(dtype);
    EXPECT_TRUE(same_bytes(xa, xb));
    Tensor a32 = Tensor::empty({3, 20}, DType::kF32), a = Tensor::empty({3, 20}, dtype);
    ops::gated_activation_fused(x, ops::Activation::kSilu, a32);
    ops::gated_activation_fused(x, ops::Activation::kSilu, a);
    EXPECT_TRUE(same_bytes(a, as(a32, dtype))) << dtype_name(dtype);
    Tensor g32 = Tensor::empty({3, 40}, DType::kF32), g = Tensor::empty({3, 40}, dtype);
    ops::gated_activation(x, r, ops::Activation::kGeluTanh, g32);
    ops::gated_activation(x, r, ops::Activation::kGeluTanh, g);
    EXPECT_TRUE(same_bytes(g, as(g32, dtype))) << dtype_name(dtype);
  }
}

TEST(RoundedIo, AttentionsRoundTheirF32Output) {
  const Tensor q = test::random_tensor({5, 4, 16}, DType::kF32, 9, 2.0f);
  const Tensor k = test::random_tensor({9, 2, 16}, DType::kBF16, 10, 2.0f);
  const Tensor v = test::random_tensor({9, 2, 16}, DType::kBF16, 11);
  const std::vector<int32_t> q_pos = {4, 5, 6, 7, 8}, kv_pos = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  const ops::AttentionParams p{0.25f, 0.0f, 0};
  const std::vector<ops::AttentionSeq> seqs = {{&k, &v, 0, 2, 6}, {&k, &v, 2, 3, 9}};
  const std::vector<int32_t> seq_pos = {4, 5, 6, 7, 8};
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    Tensor o32 = Tensor::empty(q.shape(), DType::kF32), o = Tensor::empty(q.shape(), dtype);
    ops::attention(q, k, v, q_pos, kv_pos, p, o32);
    ops::attention(q, k, v, q_pos, kv_pos, p, o);
    EXPECT_TRUE(same_bytes(o, as(o32, dtype))) << "attention, " << dtype_name(dtype);
    ops::attention_seqs(q, seqs, seq_pos, p, o32);
    ops::attention_seqs(q, seqs, seq_pos, p, o);
    EXPECT_TRUE(same_bytes(o, as(o32, dtype))) << "attention_seqs, " << dtype_name(dtype);
  }
  Tensor oi = Tensor::empty(q.shape(), DType::kI32);
  test::expect_invalid([&] { ops::attention_seqs(q, seqs, seq_pos, p, oi); }, "f32, bf16 or f16");
}

TEST(RoundedIo, AProductOverRoundedXIsTheProductOverItsValues) {
  const Tensor w = test::random_tensor({24, 32}, DType::kBF16, 5);
  const Tensor xr = test::random_tensor({5, 32}, DType::kBF16, 6);
  Tensor want = Tensor::empty({5, 24}, DType::kF32), got = Tensor::empty({5, 24}, DType::kF32);
  ops::matmul(as(xr, DType::kF32), w, nullptr, want);
  ops::matmul(xr, w, nullptr, got);
  EXPECT_TRUE(same_bytes(got, want));
}

TEST(RoundedIo, ChecksTheDtypes) {
  const Tensor w = test::random_tensor({24, 32}, DType::kBF16, 5);
  const Tensor x16 = test::random_tensor({5, 32}, DType::kF16, 6);
  Tensor y = Tensor::empty({5, 24}, DType::kF32);
  test::expect_invalid([&] { ops::matmul(x16, w, nullptr, y); }, "w's dtype");
  Tensor x = test::random_tensor({4, 32}, DType::kF32, 7);
  const Tensor nw = test::random_tensor({32}, DType::kF32, 8);
  Tensor into_x = Tensor::view_of(x.storage(), 0, {4, 32}, DType::kBF16);
  test::expect_invalid([&] { ops::rms_norm(x, nw, 1e-6f, into_x); }, "overlap");
  Tensor y16 = Tensor::empty({4, 32}, DType::kBF16);
  test::expect_invalid([&] { ops::layer_norm(x, nw, nullptr, 1e-5f, y16); }, "f32");
  Tensor yi = Tensor::empty({4, 32}, DType::kI32);
  test::expect_invalid([&] { ops::rms_norm(x, nw, 1e-6f, yi); }, "f32, bf16 or f16");
}

}  // namespace
}  // namespace cairn
