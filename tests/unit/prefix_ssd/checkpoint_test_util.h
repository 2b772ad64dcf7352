// Generation checkpoints with random contents for the checkpoint file and
// store tests.
#pragma once

#include <random>

#include "prefix/checkpoint_file.h"
#include "prefix/page_key.h"
#include "ssd_test_util.h"

namespace cairn::test {

inline TierNamespace checkpoint_ns(const std::string& fp = "model-a") {
  return {fp, "bf16/p16", kCheckpointTag};
}

// A checkpoint of `step` emitted tokens after a prompt of n_prompt, its full
// pages alternating between the two tiers, with logprobs when asked.
inline Checkpoint make_checkpoint(std::mt19937& rng, const PageKey& key, int64_t n_prompt,
                                  int64_t step, bool logprobs = true) {
  Checkpoint c;
  c.key = key;
  c.seed = (uint64_t{rng()} << 32) | rng();
  c.seed_chosen = rng() % 2 == 0;
  c.n_prompt = n_prompt;
  for (int64_t i = 0; i < n_prompt + step; ++i)
    c.tokens.push_back(static_cast<int32_t>(rng() % 512));
  c.page_tokens = 16;
  c.quantized = rng() % 2 == 0;
  for (int64_t i = 0; i < (n_prompt + step - 1) / 16; ++i)
    c.pages.push_back({i % 2 ? PageSource::kCheckpoint : PageSource::kPrefix,
                       PageKey{rng(), static_cast<uint64_t>(i) + 1}});
  c.has_logprobs = logprobs;
  if (logprobs)
    for (int64_t i = 0; i < step; ++i) {
      c.logprobs.push_back(-0.01f * static_cast<float>(rng() % 1000));
      c.top.emplace_back();
      for (uint32_t j = 0; j < rng() % 4; ++j)
        c.top.back().push_back({static_cast<int32_t>(rng() % 512), -0.5f * static_cast<float>(j)});
    }
  return c;
}

inline void expect_same(const Checkpoint& a, const Checkpoint& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.seed_chosen, b.seed_chosen);
  EXPECT_EQ(a.n_prompt, b.n_prompt);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.page_tokens, b.page_tokens);
  EXPECT_EQ(a.quantized, b.quantized);
  ASSERT_EQ(a.pages.size(), b.pages.size());
  for (size_t i = 0; i < a.pages.size(); ++i) {
    EXPECT_EQ(a.pages[i].source, b.pages[i].source) << i;
    EXPECT_EQ(a.pages[i].key, b.pages[i].key) << i;
  }
  EXPECT_EQ(a.has_logprobs, b.has_logprobs);
  EXPECT_EQ(a.logprobs, b.logprobs);
  ASSERT_EQ(a.top.size(), b.top.size());
  for (size_t i = 0; i < a.top.size(); ++i) {
    ASSERT_EQ(a.top[i].size(), b.top[i].size()) << i;
    for (size_t j = 0; j < a.top[i].size(); ++j) {
      EXPECT_EQ(a.top[i][j].id, b.top[i][j].id);
      EXPECT_EQ(a.top[i][j].logprob, b.top[i][j].logprob);
    }
  }
}

}  // namespace cairn::test
