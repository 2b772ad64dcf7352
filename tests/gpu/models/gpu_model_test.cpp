// Every family's transformers fixtures (tests/fixtures/models) with the model
// on the GPU and its KV in the device cache (f32, as the fixtures' float32
// compute holds it): the prompt whole, in chunks of 7 and one token at a time,
// then 16 greedy steps; and the determinism contract on the device: a row's
// logits bit-identical whatever the chunking and whatever shares its batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "backend/device.h"
#include "core/error.h"
#include "gpu_case.h"
#include "kv/device_cache.h"
#include "model/config.h"
#include "model/registry.h"
#include "reference.h"

namespace cairn::test {
namespace {

struct Case {
  std::string family, weights;
};

class GpuParityTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
    std::string dir = std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/" +
                      GetParam().family + "/" + GetParam().weights;
    ref_ = load_reference(dir);
    model_ = load_model(dir, {});
    model_->to_device(kGpu);
    bound_ = (GetParam().weights == "f32" ? 1e-4f : 2e-2f) * ref_.max_abs_logit;
  }
  std::unique_ptr<DeviceKvCache> cache(int32_t slots) {
    return std::make_unique<DeviceKvCache>(model_->config(), kGpu, DType::kF32, slots, 128);
  }
  void expect_row(const std::vector<float>& logits, const Tensor& table, int64_t row) {
    float d = max_abs_diff(logits, table, row);
    worst_ = std::max(worst_, d);
    EXPECT_LE(d, bound_) << "row " << row;
  }
  // The prompt in chunks (0: whole), each chunk's last row checked, then greedy steps.
  std::vector<float> run_chunked(int64_t chunk, bool check) {
    auto kv = cache(1);
    const auto& ids = ref_.prompt_ids;
    const int64_t n = static_cast<int64_t>(ids.size());
    std::vector<float> last;
    for (int64_t b = 0; b < n; b += (chunk > 0 ? chunk : n)) {
      int64_t e = std::min(n, b + (chunk > 0 ? chunk : n));
      last = run_span(*model_, *kv, 0, ids, b, e);
      if (check) expect_row(last, ref_.prompt_logits, e - 1);
    }
    if (!check) return last;
    std::vector<int32_t> seq = ids;
    std::vector<float> logits = last;
    for (size_t s = 0; s < ref_.step_ids.size(); ++s) {
      if (s > 0) {
        seq.push_back(ref_.step_ids[s - 1]);
        int64_t m = static_cast<int64_t>(seq.size());
        logits = run_span(*model_, *kv, 0, seq, m - 1, m);
      }
      expect_row(logits, ref_.step_logits, static_cast<int64_t>(s));
      EXPECT_EQ(argmax(logits), ref_.step_ids[s]) << "greedy step " << s;
    }
    std::printf("[gpu parity] %s/%s chunk %ld: max |d| %.3g = %.3g x max |logit|\n",
                GetParam().family.c_str(), GetParam().weights.c_str(), static_cast<long>(chunk),
                worst_, worst_ / ref_.max_abs_logit);
    return last;
  }

  Reference ref_;
  std::unique_ptr<Model> model_;
  float bound_ = 0, worst_ = 0;
};

TEST_P(GpuParityTest, WholePrompt) {
  run_chunked(0, true);
}
TEST_P(GpuParityTest, ChunksOfSeven) {
  run_chunked(7, true);
}
TEST_P(GpuParityTest, OneTokenAtATime) {
  run_chunked(1, true);
}

// Bitwise: chunk sizes whole / 7 / 1, and the prompt beside another sequence.
TEST_P(GpuParityTest, ChunkingAndBatchingAreBitwiseInvariant) {
  const auto& p = ref_.prompt_ids;
  const int64_t n = static_cast<int64_t>(p.size());
  std::vector<float> whole = run_chunked(0, false);
  EXPECT_EQ(whole, run_chunked(7, false)) << "whole vs chunks of 7";
  EXPECT_EQ(whole, run_chunked(1, false)) << "whole vs one token at a time";

  auto kv = cache(2);
  ForwardBatch b;
  b.tokens.assign(p.begin(), p.begin() + 9);
  b.tokens.insert(b.tokens.end(), p.begin(), p.end());
  for (int64_t i = 0; i < 9; ++i) b.positions.push_back(static_cast<int32_t>(i));
  for (int64_t i = 0; i < n; ++i) b.positions.push_back(static_cast<int32_t>(i));
  b.spans = {{1, 0, 9, false}, {0, 9, n, true}};
  const int64_t vocab = model_->config().vocab_size;
  Tensor logits = Tensor::empty({1, vocab}, DType::kF32);
  model_->forward(b, *kv, logits);
  EXPECT_EQ(std::vector<float>(logits.data<float>(), logits.data<float>() + vocab), whole)
      << "alone vs in a ragged batch";
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const char* f : {"llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "phi3"})
    for (const char* w : {"f32", "bf16"}) out.push_back({f, w});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Families, GpuParityTest, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) {
                           return info.param.family + "_" + info.param.weights;
                         });

// Affine-quantized KV in the device cache (qwen3: head_dim 32, the one fixture a group of 32
// divides): a row's logits are bit-identical whole, in chunks of 7 and token by token, and
// within the bf16 bound of the CPU backend over the same format (a code may round the other
// way where the GPU's and the CPU's K differ in the last bits).
TEST(GpuQuantizedKv, InvariantAndCloseToTheCpu) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const std::string dir = std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/qwen3/f32";
  const Reference ref = load_reference(dir);
  std::unique_ptr<Model> gpu = load_model(dir, {}), cpu = load_model(dir, {});
  gpu->to_device(kGpu);
  const auto& ids = ref.prompt_ids;
  const int64_t n = static_cast<int64_t>(ids.size());
  for (int32_t bits : {8, 4}) {
    const ops::KvRowQuant q{bits, 32};
    auto run = [&](Model& m, Device d, int64_t chunk) {
      DeviceKvCache kv(m.config(), d, DType::kF32, 1, 128, q);
      std::vector<float> last;
      for (int64_t b = 0; b < n; b += chunk)
        last = run_span(m, kv, 0, ids, b, std::min(n, b + chunk));
      return last;
    };
    const std::vector<float> whole = run(*gpu, kGpu, n);
    EXPECT_EQ(whole, run(*gpu, kGpu, 7)) << bits << "-bit KV: whole vs chunks of 7";
    EXPECT_EQ(whole, run(*gpu, kGpu, 1)) << bits << "-bit KV: whole vs one token at a time";
    const std::vector<float> on_cpu = run(*cpu, Device{DeviceKind::kCpu, 0}, n);
    float d = 0;
    for (size_t i = 0; i < whole.size(); ++i) d = std::max(d, std::abs(whole[i] - on_cpu[i]));
    EXPECT_LE(d, 2e-2f * ref.max_abs_logit) << bits << "-bit KV: GPU vs CPU";
    std::printf("[gpu quantized kv] qwen3 %d-bit: max |gpu - cpu| %.3g = %.3g x max |logit|\n",
                bits, d, d / ref.max_abs_logit);
  }
}

}  // namespace
}  // namespace cairn::test
