// The CPU ops over affine-quantized K/V rows (ops::KvRowQuant): attention_seqs
// over u8 rows equals attention_seqs over the same rows decoded to f32 bit for
// bit (fast and reference table); quantize_rows writes core/affine_row.h's
// bytes of every head row and nothing else; the arguments of both are checked,
// and ops::attention refuses kv_quant.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "../../ops/cpu/op_test_util.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/ops.h"
#include "core/affine_row.h"
#include "core/error.h"
#include "expect_invalid.h"

namespace cairn {
namespace {

using test::bit_equal;
using test::expect_invalid;
using test::random_tensor;

constexpr int64_t kHeads = 8, kKvHeads = 2;
constexpr float kSentinel = -77.25f;

// f32 rows [n, kKvHeads, head_dim] quantized into a new u8 tensor by ops::quantize_rows.
Tensor quantized(const Tensor& x, const ops::KvRowQuant& q) {
  Tensor rows = Tensor::empty({x.dim(0), kKvHeads, q.row_bytes(x.dim(2))}, DType::kU8);
  const ops::RowCopy c{&x, 0, &rows, 0, x.dim(0)};
  ops::quantize_rows(std::span(&c, 1), q);
  return rows;
}

// u8 rows decoded by core/affine_row.h into f32 [n, kKvHeads, head_dim].
Tensor decoded(const Tensor& rows, int64_t head_dim, const ops::KvRowQuant& q) {
  Tensor y = Tensor::empty({rows.dim(0), kKvHeads, head_dim}, DType::kF32);
  for (int64_t i = 0; i < rows.dim(0) * kKvHeads; ++i)
    decode_affine(rows.data<uint8_t>() + i * rows.dim(2), head_dim, q.bits, q.group_size,
                  y.data<float>() + i * head_dim);
  return y;
}

struct SeqCase {
  int64_t q_begin, n_q, n_kv, buffer_rows;
};
// 12 query rows; row 5 belongs to no sequence.
const SeqCase kSeqs[] = {
    {0, 1, 1, 3}, {1, 4, 40, 41}, {6, 1, 130, 140}, {7, 5, 5, 5}, {11, 0, 2, 2}};

Tensor sentinel_out(int64_t head_dim) {
  Tensor out = Tensor::empty({12, kHeads, head_dim}, DType::kF32);
  for (int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = kSentinel;
  return out;
}

void expect_equals_decoded(int64_t head_dim, const ops::KvRowQuant& q, ops::AttentionParams p) {
  const Tensor x = random_tensor({12, kHeads, head_dim}, DType::kF32, 5, 2.0f);
  std::vector<Tensor> k8, v8, k32, v32;  // u8 rows and their f32 decoding
  std::vector<int32_t> positions(12, 0);
  uint32_t seed = 300;
  for (const SeqCase& c : kSeqs) {
    k8.push_back(quantized(
        random_tensor({c.buffer_rows, kKvHeads, head_dim}, DType::kF32, seed++, 3.0f), q));
    v8.push_back(
        quantized(random_tensor({c.buffer_rows, kKvHeads, head_dim}, DType::kF32, seed++), q));
    k32.push_back(decoded(k8.back(), head_dim, q));
    v32.push_back(decoded(v8.back(), head_dim, q));
    for (int64_t i = 0; i < c.n_q; ++i)
      positions[static_cast<size_t>(c.q_begin + i)] = static_cast<int32_t>(c.n_kv - c.n_q + i);
  }
  std::vector<ops::AttentionSeq> seqs8, seqs32;
  for (size_t i = 0; i < std::size(kSeqs); ++i) {
    seqs8.push_back({&k8[i], &v8[i], kSeqs[i].q_begin, kSeqs[i].n_q, kSeqs[i].n_kv});
    seqs32.push_back({&k32[i], &v32[i], kSeqs[i].q_begin, kSeqs[i].n_q, kSeqs[i].n_kv});
  }
  Tensor want = sentinel_out(head_dim), got = sentinel_out(head_dim);
  ops::attention_seqs(x, seqs32, positions, p, want);
  p.kv_quant = q;
  ops::attention_seqs(x, seqs8, positions, p, got);
  EXPECT_TRUE(bit_equal(got, want)) << q.bits << "-bit, group " << q.group_size << ", head_dim "
                                    << head_dim << ", window " << p.window;
  EXPECT_EQ(got.data<float>()[5 * kHeads * head_dim], kSentinel) << "row 5 belongs to none";
}

TEST(KvQuantOps, AttentionSeqsEqualsTheDecodedRows) {
  for (bool reference : {false, true}) {
    ops::cpu::use_reference_ops(reference);
    for (int32_t bits : {4, 8})
      for (int32_t gs : {32, 64, 128})
        for (int64_t head_dim : {128, 256})
          for (int32_t window : {0, 7})
            expect_equals_decoded(head_dim, {bits, gs}, {0.3f, 0.0f, window});
    expect_equals_decoded(64, {4, 32}, {0.3f, 30.0f, 0});
  }
  ops::cpu::use_reference_ops(false);
}

// Rows [2, 5) of src into rows [1, 4) of a poisoned dst: each head row is
// encode_affine's bytes; rows 0 and 4 keep their poison.
TEST(KvQuantOps, QuantizeRowsWritesTheAffineBytesOfItsRows) {
  for (int32_t bits : {4, 8})
    for (int32_t gs : {32, 64, 128}) {
      const ops::KvRowQuant q{bits, gs};
      const int64_t d = 128, rb = q.row_bytes(d);
      const Tensor src = random_tensor({6, kKvHeads, d}, DType::kF32, 9, 4.0f);
      Tensor dst = Tensor::empty({5, kKvHeads, rb}, DType::kU8);
      std::memset(dst.raw(), 0xa5, dst.nbytes());
      const ops::RowCopy c{&src, 2, &dst, 1, 3};
      ops::quantize_rows(std::span(&c, 1), q);
      std::vector<uint8_t> want(static_cast<size_t>(5 * kKvHeads * rb), 0xa5);
      for (int64_t i = 0; i < 3 * kKvHeads; ++i)
        encode_affine(src.data<float>() + (2 * kKvHeads + i) * d, d, bits, gs,
                      want.data() + (kKvHeads + i) * rb);
      EXPECT_EQ(0, std::memcmp(dst.raw(), want.data(), want.size())) << bits << "/" << gs;
    }
}

TEST(KvQuantOps, QuantizeRowsArgumentsAreChecked) {
  const ops::KvRowQuant q{8, 64};
  const Tensor src = random_tensor({4, kKvHeads, 128}, DType::kF32, 1);
  const Tensor src_bf16 = random_tensor({4, kKvHeads, 128}, DType::kBF16, 1);
  Tensor a = Tensor::empty({6, kKvHeads, q.row_bytes(128)}, DType::kU8);
  Tensor b = Tensor::empty({6, kKvHeads, q.row_bytes(128)}, DType::kU8);
  Tensor narrow = Tensor::empty({6, kKvHeads, 128}, DType::kU8);
  Tensor f32 = Tensor::empty({6, kKvHeads, q.row_bytes(128)}, DType::kF32);
  auto run = [](std::vector<ops::RowCopy> copies, ops::KvRowQuant qq) {
    ops::quantize_rows(copies, qq);
  };
  run({{&src, 0, &a, 0, 2}, {&src, 2, &a, 2, 2}, {&src, 0, &b, 4, 2}}, q);  // fine
  expect_invalid([&] { run({{&src, 0, &a, 0, 1}}, {3, 64}); }, "bits must be 4 or 8");
  expect_invalid([&] { run({{&src, 0, &a, 0, 1}}, {8, 48}); }, "group_size must be 32, 64 or 128");
  expect_invalid([&] { run({}, {8, 16}); }, "group_size");
  const Tensor src96 = random_tensor({4, kKvHeads, 96}, DType::kF32, 1);
  expect_invalid([&] { run({{&src96, 0, &a, 0, 1}}, {8, 64}); }, "does not divide head_dim 96");
  expect_invalid([&] { run({{&src_bf16, 0, &a, 0, 1}}, q); }, "must be f32");
  expect_invalid([&] { run({{&src, 0, &f32, 0, 1}}, q); }, "must be u8");
  expect_invalid([&] { run({{&src, 0, &narrow, 0, 1}}, q); }, "8-bit rows of head_dim 128");
  expect_invalid([&] { run({{&src, 3, &a, 0, 2}}, q); }, "rows [3, +2)");
  expect_invalid([&] { run({{&src, 0, &a, 5, 2}}, q); }, "rows [0, +2)");
  expect_invalid([&] { run({{&src, 0, &a, 0, 2}, {&src, 2, &a, 1, 2}}, q); }, "overlap");
  expect_invalid([&] { run({{&src, 0, &a, 0, 1}, {&src96, 0, &b, 0, 1}}, q); }, "copies[1].src");
  expect_invalid([&] { run({{&src, 0, nullptr, 0, 1}}, q); }, "no src or dst");
}

TEST(KvQuantOps, AttentionArgumentsAreChecked) {
  const ops::KvRowQuant q{4, 32};
  const Tensor x = random_tensor({2, kHeads, 64}, DType::kF32, 2);
  const Tensor k8 = quantized(random_tensor({3, kKvHeads, 64}, DType::kF32, 3), q);
  const Tensor k32 = random_tensor({3, kKvHeads, 64}, DType::kF32, 4);
  const Tensor k8_wide =
      Tensor::zeros({3, kKvHeads, ops::KvRowQuant{8, 32}.row_bytes(64)}, DType::kU8);
  Tensor out = sentinel_out(64).slice_rows(0, 2);
  const std::vector<int32_t> positions = {0, 1};
  ops::AttentionParams p{0.3f, 0.0f, 0};
  p.kv_quant = q;
  auto run = [&](const Tensor& k, ops::KvRowQuant kq) {
    ops::AttentionParams pp = p;
    pp.kv_quant = kq;
    const ops::AttentionSeq s{&k, &k, 0, 2, 2};
    ops::attention_seqs(x, std::span(&s, 1), positions, pp, out);
  };
  run(k8, q);  // fine
  expect_invalid([&] { run(k32, q); }, "must be u8");
  expect_invalid([&] { run(k8_wide, q); }, "row_bytes");
  expect_invalid([&] { run(k8, {4, 128}); }, "does not divide head_dim 64");
  expect_invalid([&] { run(k8, {2, 32}); }, "bits must be 4 or 8");
  expect_invalid([&] { run(k8, {}); }, "must be f32, bf16 or f16");
  expect_invalid(
      [&] {
        ops::attention(x, k32, k32, positions, std::vector<int32_t>{0, 1, 2}, p, out);
      },
      "attention_seqs");
}

}  // namespace
}  // namespace cairn
