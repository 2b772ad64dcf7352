// Rounded inputs and outputs on the GPU (ops.h, matmul_input_dtype): the norms and the gated
// activations writing bf16/f16 give exactly their f32 outputs rounded, and a product over such
// an x gives the bits of the product over the f32 x on every path (thin and tiled tensor-core
// kernels, cuBLASLt where it agrees; with the switch off the GEMV kernels and the heuristic's
// cuBLASLt plans), aligned or not. Each with the CUDA table's fused inputs on (its kernels
// writing rounded outputs), and off (ops.cpp converting around the f32 ones).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backend/cuda/matmul.h"
#include "backend/device.h"
#include "backend/ops.h"
#include "gpu_test_util.h"
#include "row_test_util.h"

namespace cairn::gpu_test {
namespace {

const Device kGpu{DeviceKind::kCuda, 0};

// t (device) converted to `dtype` by the convert op (nearest even).
Tensor rounded(const Tensor& t, DType dtype) {
  Tensor r = empty_on(kGpu, t.shape(), dtype);
  ops::convert(t, r);
  return r;
}

TEST(GpuRoundedIo, NormsWriteTheirF32OutputRounded) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(71);
  for (bool fused : {true, false})
    for (DType dtype : {DType::kBF16, DType::kF16})
      for (int64_t d : {37, 4096, 4099, 16384}) {
        FusedInputsScope scope(fused);
        const int64_t n = 5;
        const Tensor x = to_device(random_host({n, d}, DType::kF32, rng, 4.0f));
        const Tensor r = to_device(random_host({n, d}, DType::kF32, rng, 4.0f));
        const Tensor w = to_device(random_host({d}, DType::kF32, rng));
        Tensor y32 = poisoned_device({n, d}, DType::kF32), y = poisoned_device({n, d}, dtype);
        ops::rms_norm(x, w, 1e-6f, y32);
        ops::rms_norm(x, w, 1e-6f, y);
        EXPECT_TRUE(bit_equal(to_host(y), to_host(rounded(y32, dtype)))) << "rms_norm d " << d;
        Tensor xa = to_device(to_host(x)), xb = to_device(to_host(x));
        ops::add_rms_norm(xa, r, w, 1e-6f, y32);
        ops::add_rms_norm(xb, r, w, 1e-6f, y);
        EXPECT_TRUE(bit_equal(to_host(y), to_host(rounded(y32, dtype)))) << "add_rms_norm d " << d;
        EXPECT_TRUE(bit_equal(to_host(xa), to_host(xb))) << "add_rms_norm's x, d " << d;
      }
}

TEST(GpuRoundedIo, GatedActivationsWriteTheirF32OutputRounded) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(72);
  for (bool fused : {true, false})
    for (DType dtype : {DType::kBF16, DType::kF16})
      for (auto act : {ops::Activation::kSilu, ops::Activation::kGeluTanh})
        for (int64_t f : {37, 14336})
          for (int64_t n : {1, 3}) {
            FusedInputsScope scope(fused);
            const Tensor gu = to_device(random_host({n, 2 * f}, DType::kF32, rng, 4.0f));
            Tensor out32 = poisoned_device({n, f}, DType::kF32),
                   out = poisoned_device({n, f}, dtype);
            ops::gated_activation_fused(gu, act, out32);
            ops::gated_activation_fused(gu, act, out);
            const Tensor want = to_host(rounded(out32, dtype));
            EXPECT_TRUE(bit_equal(to_host(out), want)) << "fused f " << f << " n " << n;
            const Tensor g = to_device(random_host({n, f}, DType::kF32, rng, 4.0f));
            const Tensor u = to_device(random_host({n, f}, DType::kF32, rng, 4.0f));
            ops::gated_activation(g, u, act, out32);
            ops::gated_activation(g, u, act, out);
            EXPECT_TRUE(bit_equal(to_host(out), to_host(rounded(out32, dtype))))
                << "split f " << f << " n " << n;
          }
}

// y = x · wᵀ for f32 x and for x rounded to w's dtype (also as a view 2 bytes off alignment):
// the same bits.
void expect_same_products(int64_t m, int64_t k, DType dtype, const std::vector<int64_t>& ns,
                          std::mt19937& rng) {
  const Tensor w = to_device(random_host({m, k}, dtype, rng));
  for (int64_t n : ns) {
    // f32 values exact in `dtype` (the GEMV kernels multiply f32 x unrounded)
    const Tensor x32 =
        rounded(rounded(to_device(random_host({n, k}, DType::kF32, rng)), dtype), DType::kF32);
    Tensor want = poisoned_device({n, m}, DType::kF32), got = poisoned_device({n, m}, DType::kF32);
    ops::matmul(x32, w, nullptr, want);
    const Tensor xr = rounded(x32, dtype);
    ops::matmul(xr, w, nullptr, got);
    EXPECT_TRUE(bit_equal(to_host(got), to_host(want))) << m << "x" << k << " n " << n;
    Tensor shifted_buf = empty_on(kGpu, {n * k + 1}, dtype);
    Tensor shifted = Tensor::view_of(shifted_buf.storage(), 2, {n, k}, dtype);
    ops::convert(x32, shifted);
    got = poisoned_device({n, m}, DType::kF32);
    ops::matmul(shifted, w, nullptr, got);
    EXPECT_TRUE(bit_equal(to_host(got), to_host(want)))
        << m << "x" << k << " n " << n << ", x unaligned";
  }
}

TEST(GpuRoundedIo, ProductsOverRoundedXGiveTheBitsOfF32X) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(73);
  for (bool invariant : {true, false}) {
    InvariantScope scope(invariant);
    FusedInputsScope fused(true);
    expect_same_products(4096, 4096, DType::kBF16, {1, 5, 17, 64, 200}, rng);
    expect_same_products(300, 1040, DType::kBF16, {1, 9, 300}, rng);
    expect_same_products(1024, 14336, DType::kBF16, {1, 33, 130}, rng);
    expect_same_products(200, 4096, DType::kF16, {1, 16, 65, 130}, rng);
  }
}

TEST(GpuRoundedIo, InputDtypeFollowsTheSwitches) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(74);
  const Tensor bf16 = to_device(random_host({64, 64}, DType::kBF16, rng));
  const Tensor f32 = to_device(random_host({64, 64}, DType::kF32, rng));
  const Tensor odd_k = to_device(random_host({64, 40}, DType::kBF16, rng));
  {
    FusedInputsScope fused(false);
    InvariantScope on(true);
    EXPECT_EQ(ops::matmul_input_dtype(bf16), DType::kF32);  // the table leaves it out
  }
  FusedInputsScope fused(true);
  {
    InvariantScope on(true);
    EXPECT_EQ(ops::matmul_input_dtype(bf16), DType::kBF16);
    EXPECT_EQ(ops::matmul_input_dtype(f32), DType::kF32);
    EXPECT_EQ(ops::matmul_input_dtype(odd_k), DType::kF32);  // not the tensor-core GEMM's
  }
  InvariantScope off(false);
  EXPECT_EQ(ops::matmul_input_dtype(bf16), DType::kF32);
}

}  // namespace
}  // namespace cairn::gpu_test
