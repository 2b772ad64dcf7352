// The shipped default model (models/default) against transformers: logits at every
// position of a fixed prompt and 12 greedy steps, from the reference that
// tools/default_model/train_default_model.py wrote with LlamaForCausalLM (f32 compute
// over the same bf16 weights) into tests/fixtures/default_model.
#include <gtest/gtest.h>

#include <cstdio>

#include "model/config.h"
#include "model/registry.h"
#include "reference.h"

namespace cairn::test {
namespace {

const std::string kModelDir = std::string(CAIRN_SOURCE_DIR) + "/models/default";
const std::string kFixtureDir = std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/default_model";

class DefaultModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ref_ = load_reference(kFixtureDir);
    model_ = load_model(kModelDir, {});
    // bf16 weights, f32 compute on both sides: only the order of sums differs.
    bound_ = 1e-3f * ref_.max_abs_logit;
  }

  void expect_row(const std::vector<float>& logits, const Tensor& table, int64_t row,
                  const char* what) {
    float d = max_abs_diff(logits, table, row);
    worst_ = std::max(worst_, d);
    EXPECT_LE(d, bound_) << what << " row " << row;
  }

  Reference ref_;
  std::unique_ptr<Model> model_;
  float bound_ = 0.0f;
  float worst_ = 0.0f;
};

TEST_F(DefaultModelTest, ConfigIsTheShippedLlama) {
  const ModelConfig& c = model_->config();
  EXPECT_EQ(c.model_type, "llama");
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_LE(c.vocab_size, 8192);
  EXPECT_LT(c.n_kv_heads, c.n_heads);  // grouped-query attention
}

TEST_F(DefaultModelTest, LogitsMatchTransformersTokenByToken) {
  ContiguousKvCache kv(model_->config(), 1, 256);
  std::vector<int32_t> ids = ref_.prompt_ids;
  int64_t n = static_cast<int64_t>(ids.size());
  std::vector<float> last;
  for (int64_t i = 0; i < n; ++i) {
    last = run_span(*model_, kv, 0, ids, i, i + 1);
    expect_row(last, ref_.prompt_logits, i, "prompt");
  }
  for (size_t s = 0; s < ref_.step_ids.size(); ++s) {
    if (s > 0) {
      ids.push_back(ref_.step_ids[s - 1]);
      int64_t m = static_cast<int64_t>(ids.size());
      last = run_span(*model_, kv, 0, ids, m - 1, m);
    }
    expect_row(last, ref_.step_logits, static_cast<int64_t>(s), "step");
    EXPECT_EQ(argmax(last), ref_.step_ids[s]) << "greedy step " << s;
  }
  std::printf("[default model] max |d| %.3g = %.3g x max |logit| (bound 1e-3)\n", worst_,
              worst_ / ref_.max_abs_logit);
}

TEST_F(DefaultModelTest, WholePromptMatchesTransformers) {
  ContiguousKvCache kv(model_->config(), 1, 256);
  int64_t n = static_cast<int64_t>(ref_.prompt_ids.size());
  expect_row(run_span(*model_, kv, 0, ref_.prompt_ids, 0, n), ref_.prompt_logits, n - 1,
             "whole prompt");
}

}  // namespace
}  // namespace cairn::test
