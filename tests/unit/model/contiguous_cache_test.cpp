// ContiguousKvCache bookkeeping and ForwardBatch::logit_rows, on a tiny config
// and hand-made K/V (attention itself is the backend's, tested there).
#include <gtest/gtest.h>

#include "core/error.h"
#include "kv/contiguous_cache.h"
#include "model/config.h"

namespace cairn {
namespace {

ModelConfig tiny() {
  ModelConfig c;
  c.n_layers = 2;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.head_dim = 4;
  return c;
}

ForwardBatch one_span(int32_t slot, int32_t first_pos, int64_t n) {
  ForwardBatch b;
  for (int64_t i = 0; i < n; ++i) {
    b.tokens.push_back(0);
    b.positions.push_back(first_pos + static_cast<int32_t>(i));
  }
  b.spans = {{slot, 0, n, true}};
  return b;
}

// Runs every layer's append for `b`; value rows are all `value`.
void step(ContiguousKvCache& kv, const ForwardBatch& b, float value, Tensor* out_last = nullptr) {
  int64_t n = b.n_tokens();
  Tensor q = Tensor::zeros({n, 2, 4}, DType::kF32);
  Tensor k = Tensor::zeros({n, 1, 4}, DType::kF32);
  Tensor v = Tensor::empty({n, 1, 4}, DType::kF32);
  for (int64_t i = 0; i < v.numel(); ++i) v.data<float>()[i] = value;
  Tensor out = Tensor::empty({n, 2, 4}, DType::kF32);
  for (int il = 0; il < 2; ++il) kv.append_and_attend(il, b, q, k, v, {}, out);
  if (out_last) *out_last = out;
}

TEST(ForwardBatch, LogitRowsAreLastRowOfWantedSpans) {
  ForwardBatch b;
  b.spans = {{0, 0, 3, true}, {1, 3, 2, false}, {2, 5, 4, true}, {3, 9, 0, true}};
  EXPECT_EQ(b.logit_rows(), (std::vector<int64_t>{2, 8}));
}

TEST(ContiguousKvCache, CountsAndAttendsOverEveryPosition) {
  ContiguousKvCache kv(tiny(), 2, 8);
  step(kv, one_span(1, 0, 3), 1.0f);
  EXPECT_EQ(kv.n_tokens(1), 3);
  EXPECT_EQ(kv.n_tokens(0), 0);
  Tensor out;
  step(kv, one_span(1, 3, 1), 5.0f, &out);
  EXPECT_EQ(kv.n_tokens(1), 4);
  // Equal scores (q = 0): the new query averages values 1, 1, 1, 5.
  EXPECT_FLOAT_EQ(out.data<float>()[0], 2.0f);
  kv.reset(1);
  EXPECT_EQ(kv.n_tokens(1), 0);
  step(kv, one_span(1, 0, 1), 3.0f, &out);
  EXPECT_FLOAT_EQ(out.data<float>()[0], 3.0f);
}

TEST(ContiguousKvCache, RejectsGapsOverflowAndBadSlots) {
  ContiguousKvCache kv(tiny(), 1, 4);
  step(kv, one_span(0, 0, 2), 1.0f);
  EXPECT_THROW(step(kv, one_span(0, 5, 1), 1.0f), Error);  // expects position 2
  EXPECT_THROW(step(kv, one_span(0, 2, 3), 1.0f), Error);  // 5 > max_tokens 4
  EXPECT_THROW(step(kv, one_span(3, 0, 1), 1.0f), Error);
  EXPECT_THROW(ContiguousKvCache(tiny(), 0, 4), Error);
}

}  // namespace
}  // namespace cairn
