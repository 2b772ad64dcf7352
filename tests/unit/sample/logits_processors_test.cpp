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
