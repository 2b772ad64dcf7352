// Decode steps replayed from captured CUDA graphs (model/step_graphs.h) against the
// same steps run op by op (--enforce-eager), for every family's fixture: three
// sequences of different lengths decode together (a bucket of 4, one row padded),
// then two, then one; every step's logits must be bit-identical, and graphs must
// really have been captured and replayed.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "backend/device.h"
#include "core/error.h"
#include "gpu_case.h"
#include "kv/device_cache.h"
#include "model/decoder.h"
#include "model/registry.h"
#include "reference.h"

namespace cairn::test {
namespace {

struct Side {
  std::unique_ptr<Model> model;
  std::unique_ptr<DeviceKvCache> kv;
};

Side make_run(const std::string& dir, int64_t max_graph_batch) {
  Side r{load_model(dir, {}), nullptr};
  r.model->to_device(kGpu);
  r.model->set_step_graphs(max_graph_batch);
  r.kv = std::make_unique<DeviceKvCache>(r.model->config(), kGpu, DType::kF32, 3, 128);
  return r;
}

// One decode step: token `tokens[i]` at `positions[i]` for slot slots[i]; the logits [n, vocab].
std::vector<float> decode(Side& r, const std::vector<int32_t>& slots,
                          const std::vector<int32_t>& tokens,
                          const std::vector<int32_t>& positions) {
  ForwardBatch b;
  b.tokens = tokens, b.positions = positions;
  for (size_t i = 0; i < slots.size(); ++i)
    b.spans.push_back({slots[i], static_cast<int64_t>(i), 1, true});
  const int64_t vocab = r.model->config().vocab_size;
  Tensor logits = Tensor::empty({static_cast<int64_t>(slots.size()), vocab}, DType::kF32);
  r.model->forward(b, *r.kv, logits);
  return std::vector<float>(logits.data<float>(), logits.data<float>() + logits.numel());
}

class GpuStepGraphs : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuStepGraphs, ReplaysEqualEagerSteps) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const std::string dir = std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/" + GetParam();
  const Reference ref = load_reference(dir);
  Side graphs = make_run(dir, kDefaultGraphBatch), eager = make_run(dir, 0);
  const std::vector<int32_t>& ids = ref.prompt_ids;
  const int64_t vocab = graphs.model->config().vocab_size;
  std::vector<int32_t> length = {5, 9, static_cast<int32_t>(ids.size())}, next(3);
  for (int32_t s = 0; s < 3; ++s) {  // prefill each sequence alone (eager in both)
    std::vector<float> a = run_span(*graphs.model, *graphs.kv, s, ids, 0, length[s]);
    ASSERT_EQ(a, run_span(*eager.model, *eager.kv, s, ids, 0, length[s])) << "prefill " << s;
    next[s] = argmax(a);
  }
  for (int step = 0; step < 12; ++step) {
    const int32_t n = step < 5 ? 3 : step < 9 ? 2 : 1;  // buckets 4, 2, 1
    std::vector<int32_t> slots, tokens, positions;
    for (int32_t s = 0; s < n; ++s)
      slots.push_back(s), tokens.push_back(next[s]), positions.push_back(length[s]++);
    const std::vector<float> got = decode(graphs, slots, tokens, positions);
    ASSERT_EQ(got, decode(eager, slots, tokens, positions))
        << "step " << step << ", " << n << " sequences";
    for (int32_t s = 0; s < n; ++s)
      next[s] = argmax(std::vector<float>(got.begin() + s * vocab, got.begin() + (s + 1) * vocab));
  }
  const auto* d = dynamic_cast<const DecoderModel*>(graphs.model.get());
  ASSERT_NE(d, nullptr);
  const size_t per_bucket = static_cast<size_t>(d->config().n_layers) + 1;
  EXPECT_EQ(d->n_step_graphs(), 3 * per_bucket) << "buckets 4, 2 and 1 captured";
  EXPECT_EQ(dynamic_cast<const DecoderModel*>(eager.model.get())->n_step_graphs(), 0u);
}

std::vector<std::string> fixtures() {
  std::vector<std::string> out;
  for (const char* f : {"llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "phi3"})
    for (const char* w : {"f32", "bf16"}) out.push_back(std::string(f) + "/" + w);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Families, GpuStepGraphs, ::testing::ValuesIn(fixtures()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '/', '_');
                           return name;
                         });

}  // namespace
}  // namespace cairn::test
