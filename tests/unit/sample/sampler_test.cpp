#include "sample/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"

namespace cairn {
namespace {

std::vector<int> histogram(const std::vector<float>& logits, const SamplingParams& p, int n) {
  std::vector<int> h(logits.size());
  for (int s = 0; s < n; ++s) h[static_cast<size_t>(sample_token(logits, p, s))]++;
  return h;
}

TEST(Sampler, GreedyPicksTheLowestIdAmongTies) {
  SamplingParams p;
  p.temperature = 0.0f;
  EXPECT_EQ(sample_token(std::vector<float>{1, 3, 3, 2}, p, 0), 1);
}

TEST(Sampler, FollowsTheSoftmaxAtTemperatureOne) {
  std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  SamplingParams p;
  p.seed = 9;
  auto h = histogram(logits, p, 20000);
  EXPECT_NEAR(h[0] / 20000.0, 0.5, 0.015);
  EXPECT_NEAR(h[1] / 20000.0, 0.3, 0.015);
  EXPECT_NEAR(h[2] / 20000.0, 0.2, 0.015);
}

TEST(Sampler, TopKAndTopPCutTheTail) {
  std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  SamplingParams p;
  p.top_k = 2;
  auto h = histogram(logits, p, 10000);
  EXPECT_EQ(h[2] + h[3], 0);
  EXPECT_NEAR(h[0] / 10000.0, 0.5 / 0.8, 0.02);
  p.top_k = 0;
  p.top_p = 0.85f;  // 0.5 + 0.3 < 0.85 ≤ 0.5 + 0.3 + 0.15
  h = histogram(logits, p, 10000);
  EXPECT_EQ(h[3], 0);
  EXPECT_GT(h[2], 0);
}

TEST(Sampler, MinPKeepsTokensNearTheTop) {
  std::vector<float> logits = {std::log(0.6f), std::log(0.3f), std::log(0.1f)};
  SamplingParams p;
  p.min_p = 0.4f;  // floor 0.24: keeps 0.6 and 0.3
  auto h = histogram(logits, p, 5000);
  EXPECT_EQ(h[2], 0);
  EXPECT_GT(h[1], 0);
}

TEST(Sampler, SameSeedAndStepGiveTheSameToken) {
  std::vector<float> logits(100);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(float(i));
  SamplingParams p;
  p.seed = 1234;
  for (uint64_t step = 0; step < 50; ++step)
    EXPECT_EQ(sample_token(logits, p, step), sample_token(logits, p, step));
}

TEST(Sampler, RejectsOutOfRangeParameters) {
  SamplingParams p;
  p.temperature = -1.0f;
  EXPECT_THROW(validate(p), Error);
  p = {};
  p.top_p = 0.0f;
  EXPECT_THROW(validate(p), Error);
  p = {};
  p.top_k = -3;
  EXPECT_THROW(validate(p), Error);
}

}  // namespace
}  // namespace cairn

namespace cairn {
namespace {

TEST(Sampler, WithoutLogprobsTheSameTokenComesOut) {
  std::vector<float> logits(500);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::cos(float(i) * 0.37f);
  for (float temperature : {0.0f, 0.8f}) {
    SamplingParams p;
    p.temperature = temperature;
    p.top_p = 0.9f;
    p.seed = 5;
    for (uint64_t step = 0; step < 50; ++step) {
      const SampleResult with = sample(logits, p, step, 2), without = sample(logits, p, step, -1);
      EXPECT_EQ(with.id, without.id);
      EXPECT_LT(with.logprob, 0.0f);
      EXPECT_EQ(without.logprob, 0.0f);
      EXPECT_TRUE(without.top.empty());
    }
  }
}

}  // namespace
}  // namespace cairn
