// The CPU attention_pages against attention_seqs over the same rows held
// contiguously, bit for bit: pages of 5 tokens laid out as the paged KV state
// lays them (another layer's blocks first, so both offsets are non-zero), a
// window whose released leading pages are null, every float K/V dtype and the
// affine rows; and its argument checks.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "../../ops/cpu/op_test_util.h"
#include "backend/ops.h"
#include "core/error.h"
#include "expect_invalid.h"

namespace cairn {
namespace {

constexpr int64_t kHeads = 4, kKvHeads = 2, kHeadDim = 32, kPage = 5;

struct Seq {
  int64_t q_begin, n_q, n_kv;
};
const Seq kSeqs[] = {{0, 1, 1}, {1, 3, 23}, {4, 1, 40}, {6, 4, 4}};  // row 5 unowned

struct Paged {
  std::vector<Tensor> k, v;               // contiguous rows per sequence
  std::vector<std::vector<uint8_t>> mem;  // pages: [other K, other V, K, V] blocks
  std::vector<const void*> table;
  std::vector<ops::AttentionSeq> paged, contiguous;
  size_t block = 0;
};

// Rows of a sequence: random f32, or their affine encoding (u8) when bits > 0.
Tensor rows_of(int64_t n, DType dt, int32_t bits, uint32_t seed) {
  const Tensor f =
      test::random_tensor({n, kKvHeads, kHeadDim}, bits ? DType::kF32 : dt, seed, 2.0f);
  if (!bits) return f;
  const ops::KvRowQuant q{bits, 32};
  Tensor u = Tensor::empty({n, kKvHeads, q.row_bytes(kHeadDim)}, DType::kU8);
  const ops::RowCopy c{&f, 0, &u, 0, n};
  ops::quantize_rows(std::span(&c, 1), q);
  return u;
}

Paged make(DType dt, int32_t bits, int32_t window) {
  Paged p;
  uint32_t seed = 1;
  p.k.reserve(std::size(kSeqs)), p.v.reserve(std::size(kSeqs));
  for (const Seq& s : kSeqs) {
    p.k.push_back(rows_of(s.n_kv, dt, bits, seed++));
    p.v.push_back(rows_of(s.n_kv, dt, bits, seed++));
    const size_t token = p.k.back().nbytes() / static_cast<size_t>(s.n_kv);
    p.block = token * kPage;
    p.paged.push_back(
        {nullptr, nullptr, s.q_begin, s.n_q, s.n_kv, static_cast<int64_t>(p.table.size())});
    p.contiguous.push_back({&p.k.back(), &p.v.back(), s.q_begin, s.n_q, s.n_kv});
    for (int64_t j0 = 0; j0 < s.n_kv; j0 += kPage) {
      if (window > 0 && j0 + kPage <= s.n_kv - s.n_q - window) {
        p.table.push_back(nullptr);  // out of every query's window: released
        continue;
      }
      // An inner vector's buffer stays put when p.mem grows, so the pointer holds.
      std::vector<uint8_t>& page = p.mem.emplace_back(4 * p.block, uint8_t{0xAB});
      const size_t n = static_cast<size_t>(std::min(kPage, s.n_kv - j0)) * token;
      std::memcpy(page.data() + 2 * p.block, p.k.back().data<uint8_t>() + j0 * token, n);
      std::memcpy(page.data() + 3 * p.block, p.v.back().data<uint8_t>() + j0 * token, n);
      p.table.push_back(page.data());
    }
  }
  return p;
}

ops::KvPages pages_of(const Paged& p, DType dt, int32_t bits) {
  return {p.table, 2 * p.block, 3 * p.block, kPage, kKvHeads, bits ? DType::kU8 : dt};
}

TEST(AttentionPages, EqualsAttentionSeqsOverContiguousRows) {
  const Tensor q = test::random_tensor({10, kHeads, kHeadDim}, DType::kF32, 99, 2.0f);
  std::vector<int32_t> pos(10, 0);
  for (const Seq& s : kSeqs)
    for (int64_t i = 0; i < s.n_q; ++i)
      pos[static_cast<size_t>(s.q_begin + i)] = static_cast<int32_t>(s.n_kv - s.n_q + i);
  for (int32_t bits : {0, 8, 4})
    for (DType dt : {DType::kF32, DType::kBF16, DType::kF16})
      for (int32_t window : {0, 6}) {
        if (bits && dt != DType::kF32) continue;
        const Paged p = make(dt, bits, window);
        ops::AttentionParams ap{0.3f, 0.0f, window};
        ap.kv_quant = {bits, bits ? 32 : 0};
        Tensor got = Tensor::zeros(q.shape(), DType::kF32);
        Tensor want = Tensor::zeros(q.shape(), DType::kF32);
        ops::attention_pages(q, pages_of(p, dt, bits), p.paged, pos, ap, got);
        ops::attention_seqs(q, p.contiguous, pos, ap, want);
        EXPECT_TRUE(test::bit_equal(got, want))
            << dtype_name(dt) << " bits " << bits << " window " << window;
      }
}

TEST(AttentionPages, ChecksItsArguments) {
  const Paged p = make(DType::kF32, 0, 0);
  const Tensor q = test::random_tensor({10, kHeads, kHeadDim}, DType::kF32, 9);
  std::vector<int32_t> pos(10, 0);
  Tensor out = Tensor::zeros(q.shape(), DType::kF32);
  std::vector<ops::AttentionSeq> beyond = p.paged;
  beyond.back().page_begin = static_cast<int64_t>(p.table.size());  // its pages past the table
  test::expect_invalid(
      [&] { ops::attention_pages(q, pages_of(p, DType::kF32, 0), beyond, pos, {}, out); }, "pages");
  ops::KvPages wrong = pages_of(p, DType::kF32, 0);
  wrong.page_tokens = 0;
  test::expect_invalid([&] { ops::attention_pages(q, wrong, p.paged, pos, {}, out); }, "tokens");
  std::vector<ops::AttentionSeq> overlap = p.paged;
  overlap[1].q_begin = 0;  // rows 0..2 overlap sequence 0's row 0
  test::expect_invalid(
      [&] { ops::attention_pages(q, pages_of(p, DType::kF32, 0), overlap, pos, {}, out); },
      "overlap");
}

}  // namespace
}  // namespace cairn
