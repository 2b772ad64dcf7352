// The CUDA table's fused inputs (backend/cuda/cuda_ops.h: the q|k|v split with RoPE in one
// pass, the products' inputs written rounded by the norms and the gated activation) against
// the separate passes, for every family's fixture: prompts prefilled whole and in chunks,
// then decode steps of three, two and one sequences through CUDA graphs. Every logit must be
// bit-identical, and the rounded inputs must really be taken (bf16 weights).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/cuda/cuda_ops.h"
#include "backend/ops.h"
#include "gpu_steps.h"
#include "model/decoder.h"
#include "reference.h"

namespace cairn::test {
namespace {

// Every logit row of prefill_and_decode with the fused inputs set to `fused`.
std::vector<std::vector<float>> run_all(const std::string& dir, const Reference& ref, bool fused) {
  cuda::set_fused_inputs(fused);
  return prefill_and_decode(dir, ref);
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
