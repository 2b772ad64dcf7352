// A request's row of ops::sample_rows: the processors' compact lists (the
// repetition window's distinct ids, generated ids counted, EOS masked only
// before min_tokens) and the op on those rows giving what apply_processors and
// sample give row by row.
#include "sample/row_args.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

namespace cairn {
namespace {

TEST(RowArgs, ListsHoldTheWindowTheCountsAndTheMaskedEos) {
  ProcessorParams p;
  p.logit_bias = {{4, 1.0f}, {2, -1.0f}};
  p.repetition_penalty = 1.2f;
  p.repetition_window = 3;
  p.frequency_penalty = 0.5f;
  p.min_tokens = 4;
  p.eos_ids = {9};
  const std::vector<int32_t> prompt = {1, 2, 3}, generated = {5, 3, 5};
  ProcessorLists l = processor_lists(p, prompt, generated);
  std::sort(l.penalized.begin(), l.penalized.end());
  EXPECT_EQ(l.penalized, (std::vector<int32_t>{3, 5}));  // the last three: 5, 3, 5
  ASSERT_EQ(l.bias.size(), 2u);
  EXPECT_EQ(l.bias[0].id, 4);
  std::sort(l.counted.begin(), l.counted.end(),
            [](const ops::IdCount& a, const ops::IdCount& b) { return a.id < b.id; });
  ASSERT_EQ(l.counted.size(), 2u);
  EXPECT_EQ(l.counted[0].id, 3);
  EXPECT_EQ(l.counted[1].count, 2);
  EXPECT_EQ(l.masked, (std::vector<int32_t>{9}));  // 3 < min_tokens
  const std::vector<int32_t> four = {5, 3, 5, 7};
  EXPECT_TRUE(processor_lists(p, prompt, four).masked.empty());
  p.repetition_penalty = 1.0f, p.frequency_penalty = 0.0f;
  l = processor_lists(p, prompt, generated);
  EXPECT_TRUE(l.penalized.empty());  // off: no list
  EXPECT_TRUE(l.counted.empty());
}

TEST(RowArgs, TheOpAgreesWithTheSamplerRowByRow) {
  std::mt19937 rng(3);
  const int64_t n = 12, vocab = 64;
  std::normal_distribution<float> nd(0.0f, 2.0f);
  Tensor logits = Tensor::empty({n, vocab}, DType::kF32);
  for (int64_t i = 0; i < logits.numel(); ++i) logits.data<float>()[i] = nd(rng);
  std::vector<std::vector<float>> host(n);
  std::vector<ProcessorParams> pp(n);
  std::vector<SamplingParams> sp(n);
  std::vector<ProcessorLists> lists(n);
  std::vector<ops::SampleRow> rows(n);
  const std::vector<int32_t> prompt = {1, 2, 3, 4, 5}, generated = {6, 7, 6};
  for (int64_t i = 0; i < n; ++i) {
    host[i].assign(logits.data<float>() + i * vocab, logits.data<float>() + (i + 1) * vocab);
    pp[i].logit_bias = {{static_cast<int32_t>(i), 2.0f}};
    pp[i].repetition_penalty = 1.0f + 0.1f * static_cast<float>(i % 3);
    pp[i].presence_penalty = 0.3f * static_cast<float>(i % 2);
    pp[i].min_tokens = static_cast<int32_t>(i % 5);
    pp[i].eos_ids = {63};
    sp[i].temperature = i % 4 == 0 ? 0.0f : 0.6f + 0.2f * static_cast<float>(i % 3);
    sp[i].top_k = static_cast<int32_t>(i % 3) * 5;
    sp[i].top_p = i % 2 ? 0.9f : 1.0f;
    sp[i].seed = 100 + static_cast<uint64_t>(i);
    lists[i] = processor_lists(pp[i], prompt, generated);
    rows[i] = sample_row_args(sp[i], 3, 4, pp[i], lists[i]);
  }
  Tensor ids = Tensor::empty({n}, DType::kI32), lps = Tensor::empty({n}, DType::kF32);
  Tensor top = Tensor::empty({n, 4}, DType::kI32), top_lp = Tensor::empty({n, 4}, DType::kF32);
  ops::sample_rows(logits, rows, {&ids, &lps, &top, &top_lp});
  for (int64_t i = 0; i < n; ++i) {
    apply_processors(host[i], pp[i], prompt, generated);
    EXPECT_EQ(std::memcmp(host[i].data(), logits.data<float>() + i * vocab, vocab * 4), 0) << i;
    const SampleResult r = sample(host[i], sp[i], 3, 4);
    EXPECT_EQ(ids.data<int32_t>()[i], r.id) << i;
    EXPECT_EQ(lps.data<float>()[i], r.logprob) << i;
    for (size_t k = 0; k < r.top.size(); ++k)
      EXPECT_EQ(top.data<int32_t>()[i * 4 + k], r.top[k].id);
  }
}

}  // namespace
}  // namespace cairn
