// Kernels that overlap the kernel ahead of them (programmatic dependent launch, launch.h)
// against the same kernels launched one after another, for every family's fixture: prompts
// prefilled whole and in chunks, then decode steps of three, two and one sequences through
// CUDA graphs, over f32 and bf16 KV (the CUDA-core and the tensor-core attention). Every
// logit must be bit-identical: a kernel that read its inputs before the kernel ahead had
// written them would show here as different logits (or as a difference between runs).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/cuda/launch.h"
#include "gpu_steps.h"
#include "reference.h"

namespace cairn::test {
namespace {

class GpuProgrammaticLaunch : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuProgrammaticLaunch, LeavesTheBits) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const std::string dir = std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/" + GetParam();
  const Reference ref = load_reference(dir);
  const cuda::ProgrammaticScope restore(cuda::programmatic_launch());
  for (DType kv : {DType::kF32, DType::kBF16}) {
    cuda::set_programmatic_launch(cuda::Programmatic::kOff);
    const std::vector<std::vector<float>> serial = prefill_and_decode(dir, ref, kv);
    for (cuda::Programmatic mode : {cuda::Programmatic::kAll, cuda::Programmatic::kEager}) {
      cuda::set_programmatic_launch(mode);
      const std::vector<std::vector<float>> overlapped = prefill_and_decode(dir, ref, kv);
      const std::vector<std::vector<float>> again = prefill_and_decode(dir, ref, kv);
      ASSERT_EQ(overlapped.size(), serial.size());
      for (size_t i = 0; i < serial.size(); ++i) {
        ASSERT_EQ(overlapped[i], serial[i])
            << "logits " << i << ", KV " << dtype_name(kv) << ", mode " << static_cast<int>(mode);
        ASSERT_EQ(again[i], serial[i]) << "logits " << i << " (second run), KV " << dtype_name(kv)
                                       << ", mode " << static_cast<int>(mode);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, GpuProgrammaticLaunch, ::testing::ValuesIn(family_fixtures()),
                         fixture_name);

}  // namespace
}  // namespace cairn::test
