// DeviceKvCache on the CPU: ragged batches of several sequences (one slot with
// two spans in a batch) give, per span, exactly ops::attention over that slot's
// keys converted to the cache dtype (or, for an affine-quantized cache, its
// keys' affine bytes decoded to f32), position p at row p; bad positions and
// overflows are errors that leave the cache as it was; fill_random of a
// quantized cache fills every layer with rows of [-1, 1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "../../ops/cpu/op_test_util.h"
#include "core/affine_row.h"
#include "core/error.h"
#include "kv/device_cache.h"
#include "kv_test_util.h"

namespace cairn {
namespace {

constexpr int64_t kHeads = 4, kKvHeads = 2, kHeadDim = 32, kMaxTokens = 12;
const Device kCpu{DeviceKind::kCpu, 0};

// What the cache should hold: per (slot, layer), the K and V rows so far in the cache
// dtype (quantized cache: f32, each head row through the affine codec and back).
struct Expected {
  DType dtype;
  std::map<std::pair<int32_t, int>, std::vector<Tensor>> k, v;
  ops::KvRowQuant quant = {};

  // Row `row` of f32 x [*, kKvHeads, kHeadDim] as the cache reads it back.
  Tensor stored(const Tensor& x, int64_t row) const {
    Tensor r = Tensor::empty({1, kKvHeads, kHeadDim}, dtype);
    if (!quant.enabled()) {
      ops::convert(x.slice_rows(row, row + 1), r);
      return r;
    }
    std::vector<uint8_t> bytes(static_cast<size_t>(quant.row_bytes(kHeadDim)));
    for (int64_t h = 0; h < kKvHeads; ++h) {
      const float* src = x.data<float>() + (row * kKvHeads + h) * kHeadDim;
      encode_affine(src, kHeadDim, quant.bits, quant.group_size, bytes.data());
      decode_affine(bytes.data(), kHeadDim, quant.bits, quant.group_size,
                    r.data<float>() + h * kHeadDim);
    }
    return r;
  }

  Tensor stacked(const std::vector<Tensor>& rows) const {
    Tensor t = Tensor::empty({static_cast<int64_t>(rows.size()), kKvHeads, kHeadDim}, dtype);
    for (size_t i = 0; i < rows.size(); ++i)
      std::memcpy(static_cast<uint8_t*>(t.raw()) + i * rows[i].nbytes(), rows[i].raw(),
                  rows[i].nbytes());
    return t;
  }
};

ForwardBatch batch_of(const std::vector<std::pair<int32_t, std::pair<int32_t, int64_t>>>& spans) {
  ForwardBatch b;  // spans: (slot, (first position, n_tokens))
  for (const auto& [slot, range] : spans) {
    b.spans.push_back({slot, b.n_tokens(), range.second, true});
    for (int64_t i = 0; i < range.second; ++i) {
      b.tokens.push_back(1);
      b.positions.push_back(range.first + static_cast<int32_t>(i));
    }
  }
  return b;
}

// Runs every layer of `b` through the cache and checks each span's rows.
void step(DeviceKvCache& cache, Expected& want, const ForwardBatch& b, uint32_t seed) {
  const int64_t n = b.n_tokens();
  const ops::AttentionParams p{0.3f, 0.0f, 0};
  for (int il = 0; il < 2; ++il) {
    const Tensor q = test::random_tensor({n, kHeads, kHeadDim}, DType::kF32, seed + 3 * il, 2.0f);
    const Tensor k = test::random_tensor({n, kKvHeads, kHeadDim}, DType::kF32, seed + 3 * il + 1);
    const Tensor v = test::random_tensor({n, kKvHeads, kHeadDim}, DType::kF32, seed + 3 * il + 2);
    Tensor out = Tensor::empty(q.shape(), DType::kF32);
    cache.append_and_attend(il, b, q, k, v, p, out);
    for (const SeqSpan& s : b.spans) {
      auto& ks = want.k[{s.seq_slot, il}];
      auto& vs = want.v[{s.seq_slot, il}];
      for (int64_t i = 0; i < s.n_tokens; ++i) {
        ks.push_back(want.stored(k, s.token_begin + i));
        vs.push_back(want.stored(v, s.token_begin + i));
      }
      std::vector<int32_t> kv_pos(ks.size());
      for (size_t j = 0; j < kv_pos.size(); ++j) kv_pos[j] = static_cast<int32_t>(j);
      Tensor o = Tensor::empty({s.n_tokens, kHeads, kHeadDim}, DType::kF32);
      ops::attention(
          q.slice_rows(s.token_begin, s.token_begin + s.n_tokens), want.stacked(ks),
          want.stacked(vs),
          std::span<const int32_t>(b.positions)
              .subspan(static_cast<size_t>(s.token_begin), static_cast<size_t>(s.n_tokens)),
          kv_pos, p, o);
      EXPECT_TRUE(test::bit_equal(
          test::copy_of(out.slice_rows(s.token_begin, s.token_begin + s.n_tokens)), o))
          << "slot " << s.seq_slot << " layer " << il << " rows " << s.token_begin;
    }
  }
}

TEST(DeviceKvCacheCpu, RaggedBatchesMatchAttentionPerSequence) {
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16}) {
    DeviceKvCache cache(test::tiny_config({0, 0}, kHeads, kKvHeads, kHeadDim), kCpu, dt, 3,
                        kMaxTokens);
    Expected want{dt, {}, {}};
    step(cache, want, batch_of({{2, {0, 3}}, {0, {0, 5}}}), 10);
    step(cache, want, batch_of({{0, {5, 1}}, {1, {0, 2}}, {2, {3, 1}}}), 20);
    step(cache, want, batch_of({{1, {2, 1}}, {0, {6, 1}}, {0, {7, 2}}}), 30);
    EXPECT_EQ(cache.n_tokens(0), 9);
    EXPECT_EQ(cache.n_tokens(1), 3);
    EXPECT_EQ(cache.n_tokens(2), 4);
  }
}

TEST(DeviceKvCacheCpu, QuantizedRowsMatchAttentionOverTheirDecoding) {
  for (int32_t bits : {4, 8}) {
    const ops::KvRowQuant q{bits, 32};
    DeviceKvCache cache(test::tiny_config({0, 0}, kHeads, kKvHeads, kHeadDim), kCpu, DType::kBF16,
                        3, kMaxTokens, q);
    EXPECT_EQ(cache.row_bytes(), static_cast<size_t>(kKvHeads * q.row_bytes(kHeadDim)));
    EXPECT_EQ(cache.slot_bytes(), 2 * 2 * kMaxTokens * cache.row_bytes());
    Expected want{DType::kF32, {}, {}, q};
    step(cache, want, batch_of({{2, {0, 3}}, {0, {0, 5}}}), 10);
    step(cache, want, batch_of({{0, {5, 1}}, {1, {0, 2}}, {2, {3, 1}}}), 20);
    step(cache, want, batch_of({{1, {2, 1}}, {0, {6, 1}}, {0, {7, 2}}}), 30);
    EXPECT_EQ(cache.n_tokens(0), 9);
  }
}

TEST(DeviceKvCacheCpu, QuantizedFormatIsChecked) {
  const ModelConfig c = test::tiny_config({0}, kHeads, kKvHeads, kHeadDim);
  for (ops::KvRowQuant q : {ops::KvRowQuant{3, 32}, ops::KvRowQuant{8, 64}}) {
    try {
      DeviceKvCache cache(c, kCpu, DType::kBF16, 1, kMaxTokens, q);
      ADD_FAILURE() << q.bits << "-bit rows in groups of " << q.group_size << " were accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    }
  }
}

// fill_random of a quantized cache: every layer holds n_tokens rows that decode
// into [-1, 1), different per layer, K from V and chunk from chunk (the f32
// staging holds fewer rows than the context when head rows are wide).
TEST(DeviceKvCacheCpu, QuantizedFillRandom) {
  const int64_t d = 128, kv_heads = 8, n = 5000;  // 16 MiB of staging is 4096 rows
  const ModelConfig c = test::tiny_config({0, 0}, 8, kv_heads, d);
  const ops::KvRowQuant q{4, 64};
  DeviceKvCache cache(c, kCpu, DType::kBF16, 1, n + 1, q);
  cache.fill_random(0, n, 7);
  EXPECT_EQ(cache.n_tokens(0), n);
  const int64_t rb = q.row_bytes(d);
  auto row = [&](const Tensor& buf, int64_t r) {  // position r, all heads, decoded
    std::vector<float> y(static_cast<size_t>(kv_heads * d));
    for (int64_t h = 0; h < kv_heads; ++h)
      decode_affine(buf.data<uint8_t>() + (r * kv_heads + h) * rb, d, q.bits, q.group_size,
                    y.data() + h * d);
    return y;
  };
  const Tensor& k0 = cache.k_buffer(0, 0);
  for (int64_t r : {int64_t{0}, int64_t{4095}, int64_t{4096}, n - 1}) {
    const std::vector<float> y = row(k0, r);
    double sum_abs = 0;
    for (float x : y) {
      ASSERT_GE(x, -1.01f);
      ASSERT_LE(x, 1.01f);
      sum_abs += std::abs(x);
    }
    EXPECT_GT(sum_abs / static_cast<double>(y.size()), 0.3) << "row " << r;
  }
  EXPECT_NE(row(k0, 0), row(k0, 4096)) << "chunks repeat";
  EXPECT_NE(row(k0, 0), row(cache.v_buffer(0, 0), 0)) << "K equals V";
  EXPECT_NE(row(k0, 0), row(cache.k_buffer(0, 1), 0)) << "layers repeat";
}

TEST(DeviceKvCacheCpu, ErrorsLeaveTheCacheAsItWas) {
  DeviceKvCache cache(test::tiny_config({0, 0}, kHeads, kKvHeads, kHeadDim), kCpu, DType::kBF16, 2,
                      kMaxTokens);
  Expected want{DType::kBF16, {}, {}};
  step(cache, want, batch_of({{0, {0, 4}}, {1, {0, 2}}}), 40);
  const Tensor q = Tensor::zeros({3, kHeads, kHeadDim}, DType::kF32);
  const Tensor kv = Tensor::zeros({3, kKvHeads, kHeadDim}, DType::kF32);
  Tensor out = Tensor::empty(q.shape(), DType::kF32);
  // The second span skips position 2 of slot 1: nothing of the batch is stored.
  try {
    cache.append_and_attend(0, batch_of({{0, {4, 1}}, {1, {3, 2}}}), q, kv, kv, {}, out);
    ADD_FAILURE() << "a gap in positions was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
  // Slot 0 would pass max_tokens.
  const Tensor q9 = Tensor::zeros({9, kHeads, kHeadDim}, DType::kF32);
  const Tensor kv9 = Tensor::zeros({9, kKvHeads, kHeadDim}, DType::kF32);
  Tensor out9 = Tensor::empty(q9.shape(), DType::kF32);
  try {
    cache.append_and_attend(0, batch_of({{0, {4, 9}}}), q9, kv9, kv9, {}, out9);
    ADD_FAILURE() << "an overflow was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory);
  }
  EXPECT_EQ(cache.n_tokens(0), 4);
  EXPECT_EQ(cache.n_tokens(1), 2);
  step(cache, want, batch_of({{1, {2, 1}}, {0, {4, 1}}}), 50);  // still consistent
}

}  // namespace
}  // namespace cairn
