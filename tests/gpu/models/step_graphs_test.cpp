// Decode steps replayed from captured CUDA graphs (model/step_graphs.h) against the
// same steps run op by op (--enforce-eager), for every family's fixture: three
// sequences of different lengths decode together (a bucket of 4, one row padded),
// then two, then one; every step's logits must be bit-identical, and graphs must
// really have been captured and replayed (with launches overlapping inside them or not).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/launch.h"
#include "backend/device.h"
#include "core/error.h"
#include "gpu_steps.h"
#include "model/decoder.h"
#include "reference.h"

namespace cairn::test {
namespace {

class GpuStepGraphs : public ::testing::TestWithParam<std::string> {};

// The steps of graphs against eager steps, launches overlapping in both (kAll) or in neither
// (kOff): either way every bucket takes its graphs (min_graph_batch).
void expect_replays_equal_eager(const std::string& dir, const Reference& ref) {
  GpuRun graphs = make_gpu_run(dir, kDefaultGraphBatch), eager = make_gpu_run(dir, 0);
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
    const std::vector<float> got = decode_step(graphs, slots, tokens, positions);
    ASSERT_EQ(got, decode_step(eager, slots, tokens, positions))
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

TEST_P(GpuStepGraphs, ReplaysEqualEagerSteps) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const std::string dir = std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/" + GetParam();
  const Reference ref = load_reference(dir);
  const cuda::ProgrammaticScope restore(cuda::programmatic_launch());
  for (cuda::Programmatic mode : {cuda::Programmatic::kOff, cuda::Programmatic::kAll}) {
    SCOPED_TRACE(static_cast<int>(mode));
    cuda::set_programmatic_launch(mode);
    expect_replays_equal_eager(dir, ref);
  }
}

// The default (launches overlap outside graphs): steps of up to 16 rows run eagerly, so a
// model of small decode steps captures no graph.
TEST_P(GpuStepGraphs, SmallStepsRunEagerlyWhenLaunchesOverlap) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const std::string dir = std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/" + GetParam();
  const cuda::ProgrammaticScope eager_overlap(cuda::Programmatic::kEager);
  GpuRun r = make_gpu_run(dir, kDefaultGraphBatch);
  std::vector<int32_t> length = {5, 9, 3};
  const Reference ref = load_reference(dir);
  for (int32_t s = 0; s < 3; ++s) run_span(*r.model, *r.kv, s, ref.prompt_ids, 0, length[s]);
  for (int step = 0; step < 3; ++step) {
    decode_step(r, {0, 1, 2}, {1, 2, 3}, length);
    for (int32_t& l : length) ++l;
  }
  const auto* d = dynamic_cast<const DecoderModel*>(r.model.get());
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->n_step_graphs(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Families, GpuStepGraphs, ::testing::ValuesIn(family_fixtures()),
                         fixture_name);

}  // namespace
}  // namespace cairn::test
