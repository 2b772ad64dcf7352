// DeviceKvCache on the CPU: ragged batches of several sequences (one slot with
// two spans in a batch) give, per span, exactly ops::attention over that slot's
// keys converted to the cache dtype, position p at row p; bad positions and
// overflows are errors that leave the cache as it was.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "../../ops/cpu/op_test_util.h"
#include "core/error.h"
#include "kv/device_cache.h"
#include "kv_test_util.h"

namespace cairn {
namespace {

constexpr int64_t kHeads = 4, kKvHeads = 2, kHeadDim = 32, kMaxTokens = 12;
const Device kCpu{DeviceKind::kCpu, 0};

// What the cache should hold: per (slot, layer), the K and V rows so far in the cache dtype.
struct Expected {
  DType dtype;
  std::map<std::pair<int32_t, int>, std::vector<Tensor>> k, v;

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
        Tensor kr = Tensor::empty({1, kKvHeads, kHeadDim}, want.dtype);
        Tensor vr = Tensor::empty({1, kKvHeads, kHeadDim}, want.dtype);
        ops::convert(k.slice_rows(s.token_begin + i, s.token_begin + i + 1), kr);
        ops::convert(v.slice_rows(s.token_begin + i, s.token_begin + i + 1), vr);
        ks.push_back(kr), vs.push_back(vr);
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
