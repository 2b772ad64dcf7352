// The thin products' tails (backend/cuda/thin_tail.cuh: the residual add and RMSNorm after the
// o and down products, the activation after gate|up, by the products' own blocks) against the
// kernels they replace, for every family's fixture: prompts prefilled whole and in chunks, then
// decode steps of three, two and one sequences (every one of them with tails on), over f32 and
// bf16 KV. Every logit must be bit-identical; a run again gives them too (a tail's count left
// behind by one launch would show in the next).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/cuda/matmul.h"
#include "gpu_steps.h"
#include "reference.h"

namespace cairn::test {
namespace {

class GpuProductTails : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuProductTails, LeaveTheBits) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const std::string dir = std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/" + GetParam();
  const Reference ref = load_reference(dir);
  const int saved = cuda::tail_rows();
  for (DType kv : {DType::kF32, DType::kBF16}) {
    cuda::set_tail_rows(0);
    const std::vector<std::vector<float>> apart = prefill_and_decode(dir, ref, kv);
    cuda::set_tail_rows(3);
    const std::vector<std::vector<float>> tails = prefill_and_decode(dir, ref, kv);
    const std::vector<std::vector<float>> again = prefill_and_decode(dir, ref, kv);
    cuda::set_tail_rows(saved);
    ASSERT_EQ(tails.size(), apart.size());
    for (size_t i = 0; i < apart.size(); ++i) {
      ASSERT_EQ(tails[i], apart[i]) << "logits " << i << ", KV " << dtype_name(kv);
      ASSERT_EQ(again[i], apart[i]) << "logits " << i << " (second run), KV " << dtype_name(kv);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, GpuProductTails, ::testing::ValuesIn(family_fixtures()),
                         fixture_name);

}  // namespace
}  // namespace cairn::test
