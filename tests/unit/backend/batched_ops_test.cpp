// The CPU batched ops against their single-sequence ops: attention_seqs equals
// ops::attention per sequence (keys at positions 0 .. n_kv-1) bit for bit, with
// the fast and the reference table, and leaves rows no sequence owns alone;
// convert_rows equals ops::convert per row block; both check their arguments.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "../../ops/cpu/op_test_util.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/ops.h"
#include "core/error.h"
#include "expect_invalid.h"

namespace cairn {
namespace {

using test::expect_invalid;

using test::bit_equal;
using test::random_tensor;

constexpr int64_t kHeads = 8, kKvHeads = 2, kHeadDim = 16;
constexpr float kSentinel = -123.5f;

struct SeqCase {
  int64_t q_begin, n_q, n_kv, buffer_rows;  // buffer_rows ≥ n_kv: rows past n_kv are ignored
};

// Queries rows 0..19 of q; row 8 belongs to no sequence. Sequences out of row order.
const SeqCase kSeqs[] = {
    {9, 7, 27, 40},    // a prefill chunk of 7 after 20 cached positions
    {0, 1, 1, 4},      // a first decode step
    {1, 1, 40, 40},    // a decode step over 40 keys
    {16, 4, 4, 9},     // a fresh prompt of 4
    {2, 6, 130, 150},  // a chunk crossing the 128-key split
    {19, 0, 5, 5},     // no queries
};

struct Batch {
  Tensor q;
  std::vector<Tensor> k, v;
  std::vector<int32_t> positions;  // each query at the end of its sequence's keys
  std::vector<ops::AttentionSeq> seqs;
};

Batch make_batch(DType kv_dtype) {
  Batch b;
  b.q = random_tensor({20, kHeads, kHeadDim}, DType::kF32, 7, 2.0f);
  b.positions.assign(20, 0);
  uint32_t seed = 100;
  for (const SeqCase& c : kSeqs) {
    b.k.push_back(random_tensor({c.buffer_rows, kKvHeads, kHeadDim}, kv_dtype, seed++, 2.0f));
    b.v.push_back(random_tensor({c.buffer_rows, kKvHeads, kHeadDim}, kv_dtype, seed++));
    for (int64_t i = 0; i < c.n_q; ++i)
      b.positions[static_cast<size_t>(c.q_begin + i)] = static_cast<int32_t>(c.n_kv - c.n_q + i);
  }
  for (size_t i = 0; i < std::size(kSeqs); ++i)
    b.seqs.push_back({&b.k[i], &b.v[i], kSeqs[i].q_begin, kSeqs[i].n_q, kSeqs[i].n_kv});
  return b;
}

Tensor sentinel_out() {
  Tensor out = Tensor::empty({20, kHeads, kHeadDim}, DType::kF32);
  for (int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = kSentinel;
  return out;
}

void expect_matches_per_sequence(DType kv_dtype, const ops::AttentionParams& p) {
  const Batch b = make_batch(kv_dtype);
  Tensor got = sentinel_out();
  ops::attention_seqs(b.q, b.seqs, b.positions, p, got);
  std::vector<int32_t> kv_positions(150);
  for (size_t j = 0; j < kv_positions.size(); ++j) kv_positions[j] = static_cast<int32_t>(j);
  for (const ops::AttentionSeq& s : b.seqs) {
    if (s.n_q == 0) continue;
    Tensor want = Tensor::empty({s.n_q, kHeads, kHeadDim}, DType::kF32);
    ops::attention(b.q.slice_rows(s.q_begin, s.q_begin + s.n_q), s.k->slice_rows(0, s.n_kv),
                   s.v->slice_rows(0, s.n_kv),
                   std::span<const int32_t>(b.positions)
                       .subspan(static_cast<size_t>(s.q_begin), static_cast<size_t>(s.n_q)),
                   std::span<const int32_t>(kv_positions).first(static_cast<size_t>(s.n_kv)), p,
                   want);
    EXPECT_TRUE(bit_equal(test::copy_of(got.slice_rows(s.q_begin, s.q_begin + s.n_q)), want))
        << "rows " << s.q_begin << " +" << s.n_q << ", " << dtype_name(kv_dtype) << ", window "
        << p.window << ", softcap " << p.softcap;
  }
  const Tensor unowned = got.slice_rows(8, 9);
  for (int64_t i = 0; i < unowned.numel(); ++i)
    ASSERT_EQ(unowned.data<float>()[i], kSentinel) << "row 8 belongs to no sequence";
}

TEST(AttentionSeqs, MatchesAttentionPerSequence) {
  for (bool reference : {false, true}) {
    ops::cpu::use_reference_ops(reference);
    for (DType dt : {DType::kF32, DType::kBF16, DType::kF16})
      for (int32_t window : {0, 5})
        for (float softcap : {0.0f, 20.0f})
          expect_matches_per_sequence(dt, {0.4f, softcap, window});
  }
  ops::cpu::use_reference_ops(false);
}

// Keys are at their indices: moving a sequence's keys changes its output.
TEST(AttentionSeqs, KeysAreAtTheirIndices) {
  const Batch b = make_batch(DType::kF32);
  Tensor got = sentinel_out();
  ops::attention_seqs(b.q, b.seqs, b.positions, {0.4f, 0.0f, 0}, got);
  // Sequence 2 (one query at position 39) with keys listed as positions 1..40:
  // the last key becomes invisible, so the row must differ.
  std::vector<int32_t> shifted(40);
  for (size_t j = 0; j < shifted.size(); ++j) shifted[j] = static_cast<int32_t>(j + 1);
  Tensor other = Tensor::empty({1, kHeads, kHeadDim}, DType::kF32);
  ops::attention(b.q.slice_rows(1, 2), b.k[2], b.v[2], std::span(b.positions).subspan(1, 1),
                 shifted, {0.4f, 0.0f, 0}, other);
  EXPECT_FALSE(bit_equal(test::copy_of(got.slice_rows(1, 2)), other));
}

TEST(AttentionSeqs, ArgumentsAreChecked) {
  Batch b = make_batch(DType::kBF16);
  Tensor out = sentinel_out();
  const ops::AttentionParams p{0.4f, 0.0f, 0};
  auto run = [&](std::vector<ops::AttentionSeq> seqs) {
    ops::attention_seqs(b.q, seqs, b.positions, p, out);
  };
  expect_invalid(
      [&] {
        run({{&b.k[0], &b.v[0], 0, 3, 27}, {&b.k[1], &b.v[1], 2, 2, 1}});
      },
      "overlap");
  expect_invalid([&] { run({{&b.k[1], &b.v[1], 0, 1, 5}}); }, "n_kv 5");
  expect_invalid([&] { run({{&b.k[1], &b.v[1], 18, 3, 1}}); }, "query rows");
  Tensor k32 = random_tensor({4, kKvHeads, kHeadDim}, DType::kF32, 1);
  expect_invalid([&] { run({{&b.k[1], &b.v[1], 0, 1, 1}, {&k32, &k32, 1, 1, 1}}); }, "seqs[1].k");
  expect_invalid([&] { run({{&b.k[1], &b.v[0], 0, 1, 1}}); }, "differ");
  Tensor wide = random_tensor({4, kKvHeads, 2 * kHeadDim}, DType::kBF16, 2);
  expect_invalid(
      [&] {
        run({{&b.k[1], &b.v[1], 0, 1, 1}, {&wide, &wide, 1, 1, 1}});
      },
      "seqs[1].k's head_dim");
  std::vector<int32_t> short_positions(19);
  expect_invalid([&] { ops::attention_seqs(b.q, b.seqs, short_positions, p, out); }, "q_positions");
}

// A batch's K rows appended to three caches of `dst` dtype, one of them twice.
void expect_convert_rows_matches(DType src_dtype, DType dst_dtype) {
  const Tensor src = random_tensor({10, kKvHeads, kHeadDim}, src_dtype, 3, 3.0f);
  std::vector<Tensor> dst, want;
  for (uint32_t i = 0; i < 3; ++i) {
    dst.push_back(random_tensor({12, kKvHeads, kHeadDim}, dst_dtype, 50 + i));
    want.push_back(test::copy_of(dst.back()));
  }
  const std::vector<ops::RowCopy> copies = {{&src, 0, &dst[2], 5, 1},
                                            {&src, 1, &dst[0], 0, 6},
                                            {&src, 7, &dst[1], 11, 1},
                                            {&src, 8, &dst[2], 6, 2},
                                            {&src, 9, &dst[1], 3, 0}};
  ops::convert_rows(copies);
  for (const ops::RowCopy& c : copies) {
    Tensor w =
        want[static_cast<size_t>(c.dst - dst.data())].slice_rows(c.dst_row, c.dst_row + c.n_rows);
    ops::convert(src.slice_rows(c.src_row, c.src_row + c.n_rows), w);
  }
  for (size_t i = 0; i < dst.size(); ++i)
    EXPECT_TRUE(bit_equal(dst[i], want[i]))
        << "cache " << i << ", " << dtype_name(src_dtype) << " -> " << dtype_name(dst_dtype);
}

TEST(ConvertRows, MatchesConvertPerRowBlock) {
  for (bool reference : {false, true}) {
    ops::cpu::use_reference_ops(reference);
    for (DType from : {DType::kF32, DType::kBF16, DType::kF16})
      for (DType to : {DType::kF32, DType::kBF16, DType::kF16})
        expect_convert_rows_matches(from, to);
  }
  ops::cpu::use_reference_ops(false);
}

TEST(ConvertRows, ArgumentsAreChecked) {
  const Tensor src = random_tensor({4, 2, 8}, DType::kF32, 1);
  Tensor a = Tensor::empty({6, 2, 8}, DType::kBF16), b = Tensor::empty({6, 2, 8}, DType::kBF16);
  Tensor wide = Tensor::empty({6, 2, 9}, DType::kBF16), f16 = Tensor::empty({6, 2, 8}, DType::kF16);
  auto run = [](std::vector<ops::RowCopy> copies) { ops::convert_rows(copies); };
  expect_invalid([&] { run({{&src, 0, &a, 0, 2}, {&src, 2, &a, 1, 2}}); }, "overlap");
  run({{&src, 0, &a, 0, 2}, {&src, 2, &a, 2, 2}, {&src, 0, &b, 1, 2}});  // adjacent: fine
  expect_invalid([&] { run({{&src, 3, &a, 0, 2}}); }, "rows [3, +2)");
  expect_invalid([&] { run({{&src, 0, &a, 5, 2}}); }, "rows [0, +2)");
  expect_invalid([&] { run({{&src, 0, &wide, 0, 1}}); }, "copies[0].src");
  expect_invalid(
      [&] {
        run({{&src, 0, &a, 0, 1}, {&src, 0, &wide, 0, 1}});
      },
      "copies[1].dst bf16[6, 2, 9] differ past dim 0");
  expect_invalid([&] { run({{&src, 0, &a, 0, 1}, {&src, 1, &f16, 0, 1}}); }, "dtypes");
}

}  // namespace
}  // namespace cairn
