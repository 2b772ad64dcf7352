#include "sample/logits_processors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "sample/sampler.h"

namespace cairn {
namespace {

TEST(LogitsProcessors, EachProcessorMatchesHandComputedValues) {
  std::vector<float> l = {2.0f, -1.0f, 0.5f, 3.0f, 0.0f};
  std::vector<int32_t> prompt = {0, 1};
  std::vector<int32_t> generated = {3, 3, 2};
  ProcessorParams p;
  p.logit_bias = {{4, 5.0f}};
  p.repetition_penalty = 2.0f;
  p.presence_penalty = 0.5f;
  p.frequency_penalty = 0.25f;
  apply_processors(l, p, prompt, generated);
  EXPECT_FLOAT_EQ(l[0], 1.0f);                     // seen, positive: 2 / 2
  EXPECT_FLOAT_EQ(l[1], -2.0f);                    // seen, negative: -1 * 2
  EXPECT_FLOAT_EQ(l[2], 0.25f - 0.25f - 0.5f);     // 0.5/2, then once generated
  EXPECT_FLOAT_EQ(l[3], 1.5f - 2 * 0.25f - 0.5f);  // 3/2, then twice generated
  EXPECT_FLOAT_EQ(l[4], 5.0f);                     // bias only
}

TEST(LogitsProcessors, RepetitionWindowLooksOnlyAtRecentTokens) {
  std::vector<float> l = {2.0f, 2.0f, 2.0f};
  ProcessorParams p;
  p.repetition_penalty = 2.0f;
  p.repetition_window = 2;
  std::vector<int32_t> prompt = {0, 1}, generated = {2};
  apply_processors(l, p, prompt, generated);
  EXPECT_FLOAT_EQ(l[0], 2.0f);  // outside the window
  EXPECT_FLOAT_EQ(l[1], 1.0f);
  EXPECT_FLOAT_EQ(l[2], 1.0f);
}

TEST(LogitsProcessors, MinTokensSuppressesEos) {
  std::vector<float> l = {0.0f, 10.0f};
  ProcessorParams p;
  p.min_tokens = 2;
  p.eos_ids = {1};
  std::vector<int32_t> prompt = {0}, generated = {0};
  apply_processors(l, p, prompt, generated);
  EXPECT_TRUE(std::isinf(l[1]) && l[1] < 0);
  std::vector<float> l2 = {0.0f, 10.0f};
  generated = {0, 0};
  apply_processors(l2, p, prompt, generated);
  EXPECT_EQ(l2[1], 10.0f);
}

TEST(LogitsProcessors, ValidationNamesTheParameter) {
  ProcessorParams p;
  p.logit_bias = {{7, 1.0f}};
  try {
    validate(p, 5);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("logit_bias"), std::string::npos);
  }
  p = {};
  p.presence_penalty = 3.0f;
  EXPECT_THROW(validate(p, 5), Error);
  p = {};
  p.repetition_penalty = 0.0f;
  EXPECT_THROW(validate(p, 5), Error);
}

TEST(SamplerLogprobs, GreedyLogprobsAreTheLogSoftmax) {
  std::vector<float> l = {1.0f, 3.0f, 2.0f, -1.0f};
  double z = 0;
  for (float x : l) z += std::exp(double(x));
  SamplingParams p;
  p.temperature = 0.0f;
  SampleResult r = sample(l, p, 0, 3);
  EXPECT_EQ(r.id, 1);
  EXPECT_NEAR(r.logprob, 3.0 - std::log(z), 1e-6);
  ASSERT_EQ(r.top.size(), 3u);
  EXPECT_EQ(r.top[1].id, 2);
  EXPECT_NEAR(r.top[1].logprob, 2.0 - std::log(z), 1e-6);
}

TEST(SamplerLogprobs, SampledLogprobsAreOfTheTruncatedTemperedDistribution) {
  std::vector<float> l = {1.0f, 3.0f, 2.0f, -1.0f};
  SamplingParams p;
  p.temperature = 0.5f;
  p.top_k = 2;  // keeps ids 1 and 2: logits / T = 6 and 4
  p.seed = 3;
  double z = std::exp(6.0) + std::exp(4.0);
  for (uint64_t step = 0; step < 20; ++step) {
    SampleResult r = sample(l, p, step, 5);
    ASSERT_TRUE(r.id == 1 || r.id == 2);
    double expect = (r.id == 1 ? 6.0 : 4.0) - std::log(z);
    EXPECT_NEAR(r.logprob, expect, 1e-6);
    ASSERT_EQ(r.top.size(), 2u);
    EXPECT_EQ(r.top[0].id, 1);
  }
}

}  // namespace
}  // namespace cairn

namespace cairn {
namespace {

// The whole chain against a distribution worked out by hand: processors, then
// temperature → top-k → top-p → min-p → draw.
TEST(SamplingChain, ProcessorsThenTruncationGiveTheHandComputedDistribution) {
  const std::vector<float> raw = {2.0f, 1.0f, 0.5f, 0.0f, -1.0f, 1.5f};
  const std::vector<int32_t> prompt = {1}, generated = {0};
  ProcessorParams pp;
  pp.logit_bias = {{5, -0.5f}};  // id 5: 1.5 → 1.0
  pp.repetition_penalty = 2.0f;  // ids 0, 1 seen: 2 → 1, 1 → 0.5
  pp.presence_penalty = 0.1f;    // id 0 generated once: 1 → 0.9
  pp.frequency_penalty = 0.2f;   //                      0.9 → 0.7
  SamplingParams sp;
  sp.temperature = 0.5f;  // → {1.4, 1.0, 1.0, 0.0, -2.0, 2.0}
  sp.top_k = 4;           // keeps ids 5, 0, 1, 2 (1 before 2: a tie goes to the lower id)
  sp.top_p = 0.8f;        // softmax of those: .438 .240 .161 .161 → cumulative reaches .8 at id 1
  sp.min_p = 0.4f;        // floor .4 × .438 = .175 cuts id 1 → keeps ids 5 and 0
  sp.seed = 77;
  const double z = std::exp(2.0) + std::exp(1.4) + 2 * std::exp(1.0);
  const double p5 = std::exp(2.0) / z, p0 = std::exp(1.4) / z;
  const double want5 = p5 / (p5 + p0), want0 = p0 / (p5 + p0);

  std::vector<float> l = raw;
  apply_processors(l, pp, prompt, generated);
  const std::vector<float> want_l = {0.7f, 0.5f, 0.5f, 0.0f, -1.0f, 1.0f};
  for (size_t i = 0; i < l.size(); ++i) EXPECT_FLOAT_EQ(l[i], want_l[i]) << i;
  std::vector<int> h(l.size());
  const int n = 20000;
  for (int step = 0; step < n; ++step) {
    SampleResult r = sample(l, sp, static_cast<uint64_t>(step), 6);
    ++h[static_cast<size_t>(r.id)];
    ASSERT_EQ(r.top.size(), 2u);  // only what the chain kept
    EXPECT_EQ(r.top[0].id, 5);
    EXPECT_NEAR(r.logprob, std::log(r.id == 5 ? want5 : want0), 1e-5);
  }
  EXPECT_NEAR(h[5] / double(n), want5, 0.015);
  EXPECT_NEAR(h[0] / double(n), want0, 0.015);
  EXPECT_EQ(h[1] + h[2] + h[3] + h[4], 0);
  // Same seed, same step: same token; the seed alone changes the draws.
  SamplingParams other = sp;
  other.seed = 78;
  int differ = 0;
  for (int step = 0; step < 200; ++step) {
    EXPECT_EQ(sample(l, sp, step).id, sample(l, sp, step).id);
    differ += sample(l, sp, step).id != sample(l, other, step).id;
  }
  EXPECT_GT(differ, 20);
}

}  // namespace
}  // namespace cairn
