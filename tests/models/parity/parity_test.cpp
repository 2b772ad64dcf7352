// Every family's logits against transformers' (tools/make_fixtures.py), through
// the contiguous KV cache and the paged KV state (pages of 16 positions, K/V
// stored in f32 as the fixtures' float32 compute holds them; bf16 storage costs
// ~0.5% of the largest logit and flips a near-tie greedy step of qwen3/bf16),
// with the prompt fed whole, in chunks of 7, one token at a time, and as one ragged batch of two
// sequences; then 16 greedy steps. And the paged state in f32 reads bit for bit like the contiguous
// cache.
#include <gtest/gtest.h>

#include <cstdio>

#include "kv/paged_kv.h"
#include "model/config.h"
#include "model/registry.h"
#include "reference.h"

namespace cairn::test {
namespace {

struct Case {
  std::string family;
  std::string weights;  // "f32" or "bf16"
  bool paged = false;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.family << "/" << c.weights << (c.paged ? "/paged" : "/contiguous");
}

// The cache under test and its position count per slot.
struct Cache {
  std::unique_ptr<KvView> view;
  int64_t n_tokens(int32_t slot) const {
    if (auto* c = dynamic_cast<ContiguousKvCache*>(view.get())) return c->n_tokens(slot);
    return dynamic_cast<PagedKvState&>(*view).n_tokens(slot);
  }
};

Cache make_cache(const ModelConfig& c, bool paged, int32_t n_slots) {
  if (!paged) return {std::make_unique<ContiguousKvCache>(c, n_slots, 128)};
  PagedKvOptions o;
  o.page_tokens = 16;
  o.budget_bytes = int64_t{256} << 20;
  o.full_store = KvStore::kF32;
  return {std::make_unique<PagedKvState>(c, o)};
}

std::string fixture_dir(const Case& c) {
  return std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/" + c.family + "/" + c.weights;
}

class ParityTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    ref_ = load_reference(fixture_dir(GetParam()));
    model_ = load_model(fixture_dir(GetParam()), {});
    bound_ = (GetParam().weights == "f32" ? 1e-4f : 2e-2f) * ref_.max_abs_logit;
  }

  // Checks `logits` against ref row `row` of `table`; tracks the largest error.
  void expect_row(const std::vector<float>& logits, const Tensor& table, int64_t row,
                  const char* what) {
    float d = max_abs_diff(logits, table, row);
    worst_ = std::max(worst_, d);
    EXPECT_LE(d, bound_) << what << " row " << row;
  }

  // Feeds the prompt in chunks of `chunk` tokens (0: whole), checking the last row
  // of every chunk, then 16 greedy steps.
  void run_chunked(int64_t chunk) {
    Cache cache = make_cache(model_->config(), GetParam().paged, 1);
    KvView& kv = *cache.view;
    const auto& ids = ref_.prompt_ids;
    int64_t n = static_cast<int64_t>(ids.size());
    std::vector<float> last;
    for (int64_t b = 0; b < n; b += (chunk > 0 ? chunk : n)) {
      int64_t e = std::min(n, b + (chunk > 0 ? chunk : n));
      last = run_span(*model_, kv, 0, ids, b, e);
      expect_row(last, ref_.prompt_logits, e - 1, "prompt");
    }
    EXPECT_EQ(cache.n_tokens(0), n);
    greedy(kv, last);
    std::printf("[parity] %s/%s chunk %ld: max |d| %.3g = %.3g x max |logit| (bound %.0e)\n",
                GetParam().family.c_str(), GetParam().weights.c_str(), static_cast<long>(chunk),
                worst_, worst_ / ref_.max_abs_logit, GetParam().weights == "f32" ? 1e-4 : 2e-2);
  }

  void greedy(KvView& kv, std::vector<float> logits) {
    std::vector<int32_t> ids = ref_.prompt_ids;
    for (size_t s = 0; s < ref_.step_ids.size(); ++s) {
      if (s > 0) {
        ids.push_back(ref_.step_ids[s - 1]);
        int64_t n = static_cast<int64_t>(ids.size());
        logits = run_span(*model_, kv, 0, ids, n - 1, n);
      }
      expect_row(logits, ref_.step_logits, static_cast<int64_t>(s), "step");
      EXPECT_EQ(argmax(logits), ref_.step_ids[s]) << "greedy step " << s;
    }
  }

  Reference ref_;
  std::unique_ptr<Model> model_;
  float bound_ = 0.0f;
  float worst_ = 0.0f;
};

TEST_P(ParityTest, WholePrompt) {
  run_chunked(0);
}
TEST_P(ParityTest, ChunksOfSeven) {
  run_chunked(7);
}
TEST_P(ParityTest, OneTokenAtATime) {
  run_chunked(1);
}

// Two sequences in one ragged batch (the whole prompt in slot 0, its first 40
// tokens in slot 1), then one decode batch holding both.
TEST_P(ParityTest, RaggedBatchOfTwoSequences) {
  Cache cache = make_cache(model_->config(), GetParam().paged, 2);
  KvView& kv = *cache.view;
  const auto& p = ref_.prompt_ids;
  int64_t n = static_cast<int64_t>(p.size()), m = 40;
  ForwardBatch b;
  b.tokens = p;
  b.tokens.insert(b.tokens.end(), p.begin(), p.begin() + m);
  for (int64_t i = 0; i < n; ++i) b.positions.push_back(static_cast<int32_t>(i));
  for (int64_t i = 0; i < m; ++i) b.positions.push_back(static_cast<int32_t>(i));
  b.spans = {{0, 0, n, true}, {1, n, m, true}};
  int64_t vocab = model_->config().vocab_size;
  Tensor logits = Tensor::empty({2, vocab}, DType::kF32);
  model_->forward(b, kv, logits);
  auto row = [&](int64_t r) {
    return std::vector<float>(logits.data<float>() + r * vocab,
                              logits.data<float>() + (r + 1) * vocab);
  };
  expect_row(row(0), ref_.prompt_logits, n - 1, "ragged slot 0");
  expect_row(row(1), ref_.prompt_logits, m - 1, "ragged slot 1");

  ForwardBatch d;  // slot 1 first this time: span order must not matter
  d.tokens = {p[static_cast<size_t>(m)], ref_.step_ids[0]};
  d.positions = {static_cast<int32_t>(m), static_cast<int32_t>(n)};
  d.spans = {{1, 0, 1, true}, {0, 1, 1, true}};
  model_->forward(d, kv, logits);
  expect_row(row(0), ref_.prompt_logits, m, "decode slot 1");
  expect_row(row(1), ref_.step_logits, 1, "decode slot 0");
  EXPECT_EQ(cache.n_tokens(0), n + 1);
  EXPECT_EQ(cache.n_tokens(1), m + 1);
}

// Full precision f32 pages read exactly like the contiguous cache: same logits, bit for bit.
TEST_P(ParityTest, PagedF32EqualsContiguousBitForBit) {
  if (!GetParam().paged) GTEST_SKIP() << "paged cases only";
  Cache a = make_cache(model_->config(), false, 1);
  Cache b = make_cache(model_->config(), true, 1);
  const auto& ids = ref_.prompt_ids;
  const int64_t n = static_cast<int64_t>(ids.size());
  for (int64_t e = 0; e < n; e += 9) {
    const int64_t end = std::min(n, e + 9);
    ASSERT_EQ(run_span(*model_, *a.view, 0, ids, e, end),
              run_span(*model_, *b.view, 0, ids, e, end))
        << "chunk ending at " << end;
  }
}

// DESIGN.md decision 7: a row's logits do not depend on how its prompt was chunked
// or what else shared its batch: bitwise, not within a tolerance.
TEST_P(ParityTest, ChunkingAndBatchingAreBitwiseInvariant) {
  const auto& p = ref_.prompt_ids;
  int64_t n = static_cast<int64_t>(p.size());
  std::vector<std::vector<float>> lasts;
  for (int64_t chunk : {n, int64_t{7}, int64_t{1}}) {
    Cache cache = make_cache(model_->config(), GetParam().paged, 1);
    KvView& kv = *cache.view;
    std::vector<float> last;
    for (int64_t b = 0; b < n; b += chunk)
      last = run_span(*model_, kv, 0, p, b, std::min(n, b + chunk));
    lasts.push_back(last);
  }
  EXPECT_EQ(lasts[0], lasts[1]) << "whole vs chunks of 7";
  EXPECT_EQ(lasts[0], lasts[2]) << "whole vs one token at a time";

  Cache cache = make_cache(model_->config(), GetParam().paged, 2);  // beside another sequence
  KvView& kv = *cache.view;
  ForwardBatch b;
  b.tokens.assign(p.begin(), p.begin() + 9);
  b.tokens.insert(b.tokens.end(), p.begin(), p.end());
  for (int64_t i = 0; i < 9; ++i) b.positions.push_back(static_cast<int32_t>(i));
  for (int64_t i = 0; i < n; ++i) b.positions.push_back(static_cast<int32_t>(i));
  b.spans = {{1, 0, 9, false}, {0, 9, n, true}};
  int64_t vocab = model_->config().vocab_size;
  Tensor logits = Tensor::empty({1, vocab}, DType::kF32);
  model_->forward(b, kv, logits);
  EXPECT_EQ(std::vector<float>(logits.data<float>(), logits.data<float>() + vocab), lasts[0])
      << "alone vs in a ragged batch";
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const char* f : {"llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "phi3"})
    for (const char* w : {"f32", "bf16"})
      for (bool paged : {false, true}) out.push_back({f, w, paged});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Families, ParityTest, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) {
                           return info.param.family + "_" + info.param.weights +
                                  (info.param.paged ? "_paged" : "_contiguous");
                         });

}  // namespace
}  // namespace cairn::test
