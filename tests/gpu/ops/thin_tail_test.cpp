// The thin products' tails (backend/cuda/thin_tail.cuh). matmul_add_rms_norm gives the bits of
// matmul then add_rms_norm — the residual x and the normed h — for rows that take the norm tail
// (y then never written: it stays poisoned, which shows the tail ran) and rows that do not;
// matmul_gated gives those of matmul then gated_activation_fused, with the gated tail (the
// thin launch asked for directly, so that a fallback cannot pass for it) and without. On both
// thin kernels (k whole and k cut), f32 and rounded outputs, several row groups, and calls one
// after another (each last block sets its count back for the next launch).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backend/cuda/matmul.h"
#include "backend/cuda/mma_gemm.h"
#include "backend/device.h"
#include "backend/ops.h"
#include "gpu_test_util.h"
#include "row_test_util.h"

namespace cairn::gpu_test {
namespace {

const Device kGpu{DeviceKind::kCuda, 0};

class TailRowsScope {
 public:
  explicit TailRowsScope(int rows) : saved_(cuda::tail_rows()) { cuda::set_tail_rows(rows); }
  ~TailRowsScope() { cuda::set_tail_rows(saved_); }
  TailRowsScope(const TailRowsScope&) = delete;
  TailRowsScope& operator=(const TailRowsScope&) = delete;

 private:
  int saved_;
};

// The thin tile every product takes in the scope (mma_gemm.h: the same bits as any other).
struct ThinTileScope {
  ThinTileScope() { cuda::force_mma_tile("thin:nt1w4k256s4"); }
  ~ThinTileScope() { cuda::force_mma_tile(""); }
  ThinTileScope(const ThinTileScope&) = delete;
  ThinTileScope& operator=(const ThinTileScope&) = delete;
};

struct Case {
  int64_t n, d, k;
  DType w_dtype, h_dtype;
};

// Runs one case twice (the second call on the first's outputs, so a count left behind would
// show); `tail`: whether its rows take the tail.
void expect_bits_of_the_two_ops(const Case& c, bool tail, std::mt19937& rng) {
  const Tensor w = to_device(random_host({c.d, c.k}, c.w_dtype, rng, 0.05f));
  const Tensor norm = to_device(random_host({c.d}, DType::kF32, rng, 2.0f));
  const Tensor a0 = to_device(random_host({c.n, c.k}, DType::kF32, rng));
  Tensor a = empty_on(kGpu, {c.n, c.k}, ops::matmul_input_dtype(w));
  ops::convert(a0, a);
  const Tensor x0 = to_device(random_host({c.n, c.d}, DType::kF32, rng, 3.0f));
  Tensor xa = to_device(to_host(x0)), xb = to_device(to_host(x0));
  Tensor ya = poisoned_device({c.n, c.d}, DType::kF32),
         yb = poisoned_device({c.n, c.d}, DType::kF32);
  const std::string what = "n " + std::to_string(c.n) + " d " + std::to_string(c.d) + " k " +
                           std::to_string(c.k) + (tail ? ", tail" : ", no tail");
  for (int round = 0; round < 2; ++round) {
    Tensor ha = poisoned_device({c.n, c.d}, c.h_dtype), hb = poisoned_device({c.n, c.d}, c.h_dtype);
    ops::matmul_add_rms_norm(a, w, xa, norm, 1e-5f, ya, ha);
    ops::matmul(a, w, nullptr, yb);
    ops::add_rms_norm(xb, yb, norm, 1e-5f, hb);
    EXPECT_TRUE(bit_equal(to_host(xa), to_host(xb))) << what << ": x, round " << round;
    EXPECT_TRUE(bit_equal(to_host(ha), to_host(hb))) << what << ": h, round " << round;
  }
  const Tensor untouched = to_host(poisoned_device({c.n, c.d}, DType::kF32));
  EXPECT_EQ(bit_equal(to_host(ya), untouched), tail) << what << ": y written or not";
}

TEST(GpuThinTail, GivesTheBitsOfTheProductThenAddRmsNorm) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(91);
  InvariantScope invariant(true);
  FusedInputsScope fused(true);
  const std::vector<Case> cases = {
      {1, 4096, 4096, DType::kBF16, DType::kBF16},   // an 8B layer's o product
      {1, 4096, 14336, DType::kBF16, DType::kBF16},  // and its down product
      {1, 4096, 4096, DType::kBF16, DType::kF32},   {3, 1000, 1040, DType::kBF16, DType::kBF16},
      {5, 8192, 2048, DType::kF16, DType::kF16},    {16, 36, 64, DType::kBF16, DType::kF32},
  };
  for (int64_t cut_from : {int64_t{0}, int64_t{1024}}) {  // k whole, then cut from 1,024
    SplitScope split(cut_from);
    for (const Case& c : cases) {
      {
        TailRowsScope rows(32);
        expect_bits_of_the_two_ops(c, true, rng);
      }
      TailRowsScope none(0);
      expect_bits_of_the_two_ops(c, false, rng);
    }
    // Two row groups of 16 (a thin tile forced on 20 rows, which take another by default).
    ThinTileScope thin;
    TailRowsScope rows(32);
    expect_bits_of_the_two_ops({20, 1000, 512, DType::kBF16, DType::kBF16}, true, rng);
  }
}

// The gate|up product then the activation, by the thin launch with its gated tail (asked for
// directly: it must take it) and by the two ops.
void expect_gated_bits(int64_t n, int64_t f, int64_t k, DType out_dtype, ops::Activation act,
                       std::mt19937& rng) {
  const Tensor w = to_device(random_host({2 * f, k}, DType::kBF16, rng, 0.05f));
  const Tensor a0 = to_device(random_host({n, k}, DType::kF32, rng));
  Tensor a = empty_on(kGpu, {n, k}, DType::kBF16);
  ops::convert(a0, a);
  const std::string what =
      "n " + std::to_string(n) + " f " + std::to_string(f) + " k " + std::to_string(k);
  Tensor gu_want = poisoned_device({n, 2 * f}, DType::kF32),
         want = poisoned_device({n, f}, out_dtype);
  ops::matmul(a, w, nullptr, gu_want);
  ops::gated_activation_fused(gu_want, act, want);
  for (int round = 0; round < 2; ++round) {
    Tensor gu = poisoned_device({n, 2 * f}, DType::kF32), out = poisoned_device({n, f}, out_dtype);
    cuda::ThinTail tail;
    tail.kind = cuda::ThinTail::kGated;
    tail.act = act == ops::Activation::kSilu ? 0 : 1;
    tail.out = out.raw();
    tail.out_dtype = out_dtype == DType::kBF16 ? 1 : out_dtype == DType::kF16 ? 2 : 0;
    tail.arrivals = cuda::thin_tail_arrivals();
    ASSERT_TRUE(cuda::mma_gemm_with_tail(a.raw(), w, tail, gu)) << what;
    EXPECT_TRUE(bit_equal(to_host(gu), to_host(gu_want))) << what << ": gate|up";
    EXPECT_TRUE(bit_equal(to_host(out), to_host(want))) << what << ": out, round " << round;
    Tensor gu2 = poisoned_device({n, 2 * f}, DType::kF32),
           out2 = poisoned_device({n, f}, out_dtype);
    ops::matmul_gated(a, w, act, gu2, out2);  // the op, tail or not
    EXPECT_TRUE(bit_equal(to_host(out2), to_host(want))) << what << ": the op's out";
  }
}

TEST(GpuThinTail, GatedGivesTheBitsOfTheProductThenTheActivation) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(93);
  InvariantScope invariant(true);
  FusedInputsScope fused(true);
  TailRowsScope rows(32);
  for (int64_t cut_from : {int64_t{0}, int64_t{1024}}) {
    SplitScope split(cut_from);
    for (auto act : {ops::Activation::kSilu, ops::Activation::kGeluTanh}) {
      expect_gated_bits(1, 14336, 4096, DType::kBF16, act, rng);  // an 8B layer's gate|up
      expect_gated_bits(3, 512, 1040, DType::kF32, act, rng);
      ThinTileScope thin;  // two row groups
      expect_gated_bits(20, 256, 512, DType::kBF16, act, rng);
    }
  }
}

TEST(GpuThinTail, RowsPastItsReachRunTheTwoOps) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(92);
  InvariantScope invariant(true);
  FusedInputsScope fused(true);
  TailRowsScope rows(32);
  // Longer than a tail's norm takes; d not a multiple of 4; more rows than a thin tile.
  expect_bits_of_the_two_ops({2, 8200, 256, DType::kBF16, DType::kBF16}, false, rng);
  expect_bits_of_the_two_ops({2, 1002, 256, DType::kBF16, DType::kBF16}, false, rng);
  expect_bits_of_the_two_ops({40, 512, 256, DType::kBF16, DType::kBF16}, false, rng);
  InvariantScope off(false);  // the GEMV kernels have no tail
  expect_bits_of_the_two_ops({1, 4096, 4096, DType::kBF16, DType::kF32}, false, rng);
}

}  // namespace
}  // namespace cairn::gpu_test
