// CUDA add, scale and softcap against the CPU reference on awkward lengths
// (float4 body and scalar tail), with the output aliasing an input.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "backend/cpu/reference/reference.h"
#include "backend/ops.h"
#include "gpu_test_util.h"
#include "row_test_util.h"

namespace cairn::gpu_test {
namespace {

const int64_t kLengths[] = {1, 3, 37, 1023, 4099, 65537};

Tensor host_copy(const Tensor& t) {
  Tensor c = Tensor::empty(t.shape(), t.dtype());
  std::copy_n(t.data<float>(), t.numel(), c.data<float>());
  return c;
}

TEST(GpuElementwise, AddMatchesReferenceAndAliases) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(61);
  for (int64_t n : kLengths) {
    Tensor a = random_host({n}, DType::kF32, rng, 3.0f), b = random_host({n}, DType::kF32, rng);
    Tensor ref = Tensor::empty({n}, DType::kF32);
    ops::ref::add(a, b, ref);
    Tensor ad = to_device(a), bd = to_device(b);
    Tensor y = poisoned_device({n}, DType::kF32);
    ops::add(ad, bd, y);
    Tensor got = to_host(y);
    EXPECT_LE(rel_error(got, ref), 1e-5) << "n " << n;
    EXPECT_TRUE(bit_equal(got, ref)) << "n " << n;  // one f32 add, rounded once on both
    ops::add(ad, bd, bd);                           // y aliases b
    EXPECT_TRUE(bit_equal(to_host(bd), ref)) << "n " << n << " in place";
  }
}

TEST(GpuElementwise, ScaleMatchesReference) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(62);
  for (int64_t n : kLengths) {
    Tensor x = random_host({n}, DType::kF32, rng, 3.0f);
    Tensor ref = host_copy(x);
    ops::ref::scale(ref, 0.37f);
    Tensor xd = to_device(x);
    ops::scale(xd, 0.37f);
    Tensor got = to_host(xd);
    EXPECT_LE(rel_error(got, ref), 1e-5) << "n " << n;
    EXPECT_TRUE(bit_equal(got, ref)) << "n " << n;
  }
}

TEST(GpuElementwise, SoftcapMatchesReference) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(63);
  for (float cap : {30.0f, 50.0f})
    for (int64_t n : kLengths) {
      Tensor x = random_host({n}, DType::kF32, rng, 120.0f);
      Tensor ref = host_copy(x);
      ops::ref::softcap(ref, cap);
      Tensor xd = to_device(x);
      ops::softcap(xd, cap);
      EXPECT_LE(rel_error(to_host(xd), ref), 1e-5) << "cap " << cap << " n " << n;
    }
}

}  // namespace
}  // namespace cairn::gpu_test
