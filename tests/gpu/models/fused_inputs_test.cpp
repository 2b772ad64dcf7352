// The CUDA table's fused inputs (backend/cuda/cuda_ops.h: the q|k|v split with RoPE in one
// pass, the products' inputs written rounded by the norms and the gated activation) against
// the separate passes, for every family's fixture: prompts prefilled whole and in chunks,
// then decode steps of three, two and one sequences through CUDA graphs. Every logit must be
// bit-identical, and the rounded inputs must really be taken (bf16 weights).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backend/cuda/cuda_ops.h"
#include "backend/ops.h"
#include "gpu_steps.h"
#include "model/decoder.h"
#include "reference.h"

namespace cairn::test {
namespace {

// Every logit row the run produces, in order, with the fused inputs set to `fused`.
std::vector<std::vector<float>> run_all(const std::string& dir, const Reference& ref, bool fused) {
  cuda::set_fused_inputs(fused);
  GpuRun r = make_gpu_run(dir, kDefaultGraphBatch);
  const std::vector<int32_t>& ids = ref.prompt_ids;
  std::vector<std::vector<float>> out;
  std::vector<int32_t> length = {5, 9, static_cast<int32_t>(ids.size())}, next(3);
  out.push_back(run_span(*r.model, *r.kv, 0, ids, 0, length[0]));  // whole
  out.push_back(run_span(*r.model, *r.kv, 1, ids, 0, 1));          // one row, then the rest
  out.push_back(run_span(*r.model, *r.kv, 1, ids, 1, length[1]));
  out.push_back(run_span(*r.model, *r.kv, 2, ids, 0, 7));  // chunks of 7 and the rest
  out.push_back(run_span(*r.model, *r.kv, 2, ids, 7, length[2]));
  next = {argmax(out[0]), argmax(out[2]), argmax(out[4])};
  const int64_t vocab = r.model->config().vocab_size;
  for (int step = 0; step < 8; ++step) {
    const int32_t n = step < 4 ? 3 : step < 6 ? 2 : 1;
    std::vector<int32_t> slots, tokens, positions;
    for (int32_t s = 0; s < n; ++s)
      slots.push_back(s), tokens.push_back(next[s]), positions.push_back(length[s]++);
    out.push_back(decode_step(r, slots, tokens, positions));
    for (int32_t s = 0; s < n; ++s)
      next[s] = argmax(
          std::vector<float>(out.back().begin() + s * vocab, out.back().begin() + (s + 1) * vocab));
  }
  return out;
}

class GpuFusedInputs : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuFusedInputs, GiveTheBitsOfTheSeparatePasses) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const std::string dir = std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/" + GetParam();
  const Reference ref = load_reference(dir);
  const bool saved = cuda::fused_inputs();
  const std::vector<std::vector<float>> separate = run_all(dir, ref, false);
  const std::vector<std::vector<float>> fused = run_all(dir, ref, true);
  if (GetParam().find("bf16") != std::string::npos) {  // the norms write bf16 for its products
    GpuRun r = make_gpu_run(dir, 0);
    const auto* d = dynamic_cast<const DecoderModel*>(r.model.get());
    ASSERT_NE(d, nullptr);
    const AttentionWeights& a = d->weights().layers.front().attn;
    EXPECT_EQ(ops::matmul_input_dtype(a.wqkv.defined() ? a.wqkv : a.wq), DType::kBF16);
  }
  cuda::set_fused_inputs(saved);
  ASSERT_EQ(fused.size(), separate.size());
  for (size_t i = 0; i < fused.size(); ++i) ASSERT_EQ(fused[i], separate[i]) << "logits " << i;
}

INSTANTIATE_TEST_SUITE_P(Families, GpuFusedInputs, ::testing::ValuesIn(family_fixtures()),
                         fixture_name);

}  // namespace
}  // namespace cairn::test
