// The serving engine on a GPU against the same engine on the CPU: a sampled
// request's logits at every step within the parity bound of f32 weights
// (1e-4 × the largest |logit|) and the same tokens, with full-precision pages
// and with 8-bit pages from position 40 (bf16-first: the conversion runs on the
// device); sampling on the device (ops::sample_rows) alone and batched. The
// determinism and SSD-tier suites run on the GPU from their own sources
// (tests/models/engine, CAIRN_ENGINE_ON_GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "engine_case.h"

namespace cairn::test {
namespace {

struct Run {
  std::string name, dir;
  int32_t kv_bits;
};
void PrintTo(const Run& r, std::ostream* os) {
  *os << r.name;
}

Outcome run_on(DeviceKind device, const Run& r, LogitsLog& log) {
  EngineOptions o;
  o.max_seqs = 4;
  o.max_batch_tokens = 64;  // the prompt in two chunks
  o.model_fingerprint = r.dir;
  o.kv.bits = r.kv_bits;
  o.kv.group_size = 32;  // the qwen3 fixture's head_dim
  o.kv.quant_start = r.kv_bits > 0 ? 40 : 0;
  log.attach(o);
  Model& m = case_model(r.dir, 1, device);
  Engine e(m, nullptr, o);
  return collect(e.submit(test_request(test_prompt(90, 7, m.config().vocab_size), 12, 0.9f, 42)),
                 log);
}

class GpuEngine : public ::testing::TestWithParam<Run> {};

TEST_P(GpuEngine, MatchesTheCpuEngine) {
  if (!device_present(DeviceKind::kCuda)) GTEST_SKIP() << "no CUDA device";
  LogitsLog log;
  const Outcome cpu = run_on(DeviceKind::kCpu, GetParam(), log);
  const Outcome gpu = run_on(DeviceKind::kCuda, GetParam(), log);
  ASSERT_EQ(gpu.final.error, "");
  ASSERT_EQ(cpu.logits.size(), gpu.logits.size());
  ASSERT_FALSE(cpu.logits.empty());
  for (size_t step = 0; step < cpu.logits.size(); ++step) {
    const std::vector<float>&a = gpu.logits[step], &b = cpu.logits[step];
    ASSERT_EQ(a.size(), b.size());
    float max_abs = 0.0f, max_diff = 0.0f;
    for (size_t i = 0; i < a.size(); ++i) {
      max_abs = std::max(max_abs, std::fabs(b[i]));
      max_diff = std::max(max_diff, std::fabs(a[i] - b[i]));
    }
    EXPECT_LE(max_diff, 1e-4f * max_abs) << "step " << step;
  }
  EXPECT_EQ(gpu.ids, cpu.ids);
}

// Sampling on the device: a seeded request with every processor, the cuts and
// top logprobs gives the same tokens, logprobs and top lists alone and batched
// with 40 others of other parameters and lengths.
TEST(GpuEngineSampling, ASeededRequestIsTheSameAloneAndBatched) {
  if (!device_present(DeviceKind::kCuda)) GTEST_SKIP() << "no CUDA device";
  Model& m = case_model(fixture_dir("qwen3"), 1, DeviceKind::kCuda);
  const int64_t vocab = m.config().vocab_size;
  Request target = test_request(test_prompt(70, 3, vocab), 16, 0.8f, 1234);
  target.sampling.top_k = 40;
  target.sampling.top_p = 0.9f;
  target.processors.repetition_penalty = 1.2f;
  target.processors.presence_penalty = 0.3f;
  target.processors.frequency_penalty = 0.2f;
  target.processors.logit_bias = {{5, 2.0f}, {7, -3.0f}};
  target.processors.min_tokens = 4;
  target.stop_ids = {static_cast<int32_t>(vocab - 1)};
  auto run = [&](int n_others) {
    EngineOptions o;
    o.max_seqs = 48;
    o.max_batch_tokens = 4096;
    o.model_fingerprint = "qwen3";
    Engine e(m, nullptr, o);
    std::vector<std::shared_ptr<RequestStream>> others;
    for (int i = 0; i < n_others; ++i) {
      Request r = test_request(test_prompt(5 + (i * 29) % 90, 50 + i, vocab), 4 + i % 13,
                               i % 4 == 0 ? 0.0f : 0.5f + 0.1f * (i % 9), 900 + i);
      r.sampling.min_p = i % 3 == 0 ? 0.05f : 0.0f;
      r.processors.repetition_penalty = i % 2 ? 1.1f : 1.0f;
      r.logprobs = i % 5 - 1;
      others.push_back(e.submit(std::move(r)));
    }
    const Event out = e.submit(target)->collect();
    for (auto& s : others) EXPECT_EQ(s->collect().error, "");
    return out;
  };
  const Event solo = run(0), batched = run(40);
  ASSERT_EQ(solo.error, "");
  ASSERT_EQ(batched.tokens.size(), solo.tokens.size());
  ASSERT_FALSE(solo.tokens.empty());
  for (size_t i = 0; i < solo.tokens.size(); ++i) {
    const TokenOut &a = solo.tokens[i], &b = batched.tokens[i];
    EXPECT_EQ(a.id, b.id) << "token " << i;
    EXPECT_EQ(a.logprob, b.logprob) << "token " << i;
    ASSERT_EQ(a.top.size(), b.top.size()) << "token " << i;
    for (size_t k = 0; k < a.top.size(); ++k) {
      EXPECT_EQ(a.top[k].id, b.top[k].id) << "token " << i;
      EXPECT_EQ(a.top[k].logprob, b.top[k].logprob) << "token " << i;
    }
  }
}

// Fast attention products (--attention-precision fast) at the model's level: a 300-token
// prompt's logits (three key splits) on the tensor-core rows of a head_dim-64 model within the
// bf16 bound (2e-2 × the largest |logit|) of the exact products', and not the same bits (the
// switch reaches the model's attention). Determinism under it: Determinism's
// tiny_hd64_fast_attention case.
TEST(GpuEngineFastAttention, NearTheExactProducts) {
  if (!device_present(DeviceKind::kCuda)) GTEST_SKIP() << "no CUDA device";
  Model& m = case_model(kTinyHd64Dir, 1, DeviceKind::kCuda);
  DeviceBackend& dev = device_backend(DeviceKind::kCuda);
  auto last_logits = [&](bool fast) {
    dev.set_fast_attention(fast);
    EngineOptions o;
    o.max_seqs = 1;
    o.model_fingerprint = "tiny_hd64";
    LogitsLog log;
    log.attach(o);
    Engine e(m, nullptr, o);
    Outcome out = collect(
        e.submit(test_request(test_prompt(300, 11, m.config().vocab_size), 1, 0.0f, 1)), log);
    dev.set_fast_attention(false);
    EXPECT_EQ(out.final.error, "");
    return out.logits.empty() ? std::vector<float>{} : out.logits.front();
  };
  const std::vector<float> exact = last_logits(false), fast = last_logits(true);
  ASSERT_EQ(fast.size(), exact.size());
  ASSERT_FALSE(exact.empty());
  float max_abs = 0.0f, max_diff = 0.0f;
  for (size_t i = 0; i < exact.size(); ++i) {
    max_abs = std::max(max_abs, std::fabs(exact[i]));
    max_diff = std::max(max_diff, std::fabs(fast[i] - exact[i]));
  }
  EXPECT_LE(max_diff, 2e-2f * max_abs);
  EXPECT_GT(max_diff, 0.0f) << "fast products gave the exact products' bits";
}

INSTANTIATE_TEST_SUITE_P(Models, GpuEngine,
                         ::testing::Values(Run{"stories260K", kStoriesDir, 0},
                                           Run{"llama", fixture_dir("llama"), 0},
                                           Run{"gemma2", fixture_dir("gemma2"), 0},
                                           Run{"qwen3", fixture_dir("qwen3"), 0},
                                           Run{"qwen3_q8_from_40", fixture_dir("qwen3"), 8}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace cairn::test
