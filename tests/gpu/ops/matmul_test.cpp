// CUDA matmul against the CPU op, and the batch-invariant switch's promise: with it on, a
// row of y is bitwise the same whatever the number of rows.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/gemm_agreement.h"
#include "backend/cuda/gemm_order.h"
#include "backend/cuda/matmul.h"
#include "backend/cuda/mma_gemm.h"
#include "backend/cuda/wgmma_gemm.h"
#include "backend/ops.h"
#include "gpu_test_util.h"

namespace cairn {
namespace {

using gpu_test::InvariantScope;
using gpu_test::poisoned_device;
using gpu_test::random_host;
using gpu_test::rel_error;
using gpu_test::SplitScope;
using gpu_test::to_device;
using gpu_test::to_host;

double tolerance(DType w) {
  return w == DType::kF32 ? 1e-5 : 1e-2;
}

// The GPU product of host tensors (w_dev already on the device), into a poisoned y.
Tensor gpu_matmul(const Tensor& x, const Tensor& w_dev, const Tensor* bias_dev) {
  Tensor xd = to_device(x);
  Tensor yd = poisoned_device({x.dim(0), w_dev.dim(0)}, DType::kF32);
  ops::matmul(xd, w_dev, bias_dev, yd);
  return to_host(yd);
}

// x as cuBLASLt multiplies it: rounded to the weights' dtype when they are bf16 or f16
// (it has no f32 × bf16 product; docs/determinism.md); the GEMV kernels multiply x as it
// is. A single output with heavy cancellation can miss the bf16 bound by the rounding of x
// alone, so each result is held to the nearer of the two products.
Tensor as_multiplied(const Tensor& x, DType w) {
  if (w == DType::kF32) return x;
  Tensor r = Tensor::empty(x.shape(), w), back = Tensor::empty(x.shape(), DType::kF32);
  ops::convert(x, r);
  ops::convert(r, back);
  return back;
}

// Every n of `ns` for one weight (m, k, dtype), with and without bias, both switch settings.
void check_weight(int64_t m, int64_t k, DType dtype, const std::vector<int64_t>& ns,
                  std::mt19937& rng) {
  Tensor w = random_host({m, k}, dtype, rng);
  Tensor bias = random_host({m}, DType::kF32, rng);
  Tensor wd = to_device(w), bd = to_device(bias);
  for (int64_t n : ns) {
    Tensor x = random_host({n, k}, DType::kF32, rng);
    for (bool with_bias : {false, true}) {
      Tensor ref = Tensor::empty({n, m}, DType::kF32), exact = Tensor::empty({n, m}, DType::kF32);
      ops::matmul(as_multiplied(x, dtype), w, with_bias ? &bias : nullptr, ref);
      ops::matmul(x, w, with_bias ? &bias : nullptr, exact);
      for (bool invariant : {true, false}) {
        SCOPED_TRACE(testing::Message() << "w " << w.describe() << " n " << n << " bias "
                                        << with_bias << " invariant " << invariant);
        InvariantScope scope(invariant);
        Tensor y = gpu_matmul(x, wd, with_bias ? &bd : nullptr);
        EXPECT_LE(std::min(rel_error(y, ref), rel_error(y, exact)), tolerance(dtype));
      }
    }
  }
}

const std::vector<int64_t> kRows = {1, 2, 3, 7, 17, 64, 300};

TEST(CudaMatmul, SmallWeightsAgainstCpu) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(11);
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
    for (int64_t k : {16, 48, 64, 100, 208})
      for (int64_t m : {1, 33, 4099}) check_weight(m, k, dtype, kRows, rng);
}

TEST(CudaMatmul, LongRowsAgainstCpu) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(12);
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
    for (int64_t m : {1, 33, 4099}) check_weight(m, 4096, dtype, kRows, rng);
  // Enough rows for the tensor-core GEMM's largest tile (mma_gemm.cu).
  check_weight(4099, 1024, DType::kBF16, {1000}, rng);
}

// k = 0: y is the bias (or zeros), for every path.
TEST(CudaMatmul, EmptyReductionGivesBias) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(13);
  Tensor x = Tensor::empty({3, 0}, DType::kF32);
  Tensor w = Tensor::empty({5, 0}, DType::kBF16);
  Tensor bias = random_host({5}, DType::kF32, rng);
  Tensor wd = to_device(w), bd = to_device(bias);
  for (bool invariant : {true, false}) {
    InvariantScope scope(invariant);
    Tensor y = gpu_matmul(x, wd, &bd);
    for (int64_t i = 0; i < 3; ++i)
      EXPECT_EQ(0, std::memcmp(y.row(i).raw(), bias.raw(), 5 * sizeof(float)));
  }
}

// Views that start off 16-byte boundaries: x (k = 33, f32 weights) and the bias (which then
// is added after the GEMM, with the same bits as in the epilogue).
TEST(CudaMatmul, UnalignedViewsAgainstCpu) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(15);
  const int64_t m = 40, k = 33;
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    Tensor w = random_host({m, k}, dtype, rng);
    Tensor bias = random_host({m + 1}, DType::kF32, rng);
    Tensor wd = to_device(w), bd = to_device(bias);
    Tensor b_host = bias.slice_rows(1, m + 1), b_dev = bd.slice_rows(1, m + 1);
    Tensor b_aligned = to_device(to_host(b_dev));
    for (int64_t n : {3, 64}) {
      Tensor x = random_host({n + 1, k}, DType::kF32, rng);
      Tensor x_host = x.slice_rows(1, n + 1), x_dev = to_device(x).slice_rows(1, n + 1);
      Tensor ref = Tensor::empty({n, m}, DType::kF32);
      ops::matmul(x_host, w, &b_host, ref);
      for (bool invariant : {true, false}) {
        SCOPED_TRACE(testing::Message()
                     << dtype_name(dtype) << " n " << n << " invariant " << invariant);
        InvariantScope scope(invariant);
        Tensor yd = poisoned_device({n, m}, DType::kF32),
               yd2 = poisoned_device({n, m}, DType::kF32);
        ops::matmul(x_dev, wd, &b_dev, yd);
        ops::matmul(x_dev, wd, &b_aligned, yd2);
        Tensor y = to_host(yd), y2 = to_host(yd2);
        EXPECT_LE(rel_error(y, ref), tolerance(dtype));
        EXPECT_EQ(0, std::memcmp(y.raw(), y2.raw(), y.nbytes()));
      }
    }
  }
}

// Rows [0, n) of x (device views of one buffer) times w; y on the host.
Tensor first_rows_product(const Tensor& xd, int64_t n, const Tensor& wd, const Tensor* bd) {
  Tensor x = xd.slice_rows(0, n);
  Tensor yd = poisoned_device({n, wd.dim(0)}, DType::kF32);
  ops::matmul(x, wd, bd, yd);
  return to_host(yd);
}

// Row i of y for n rows equals row i for the most rows, bit for bit.
void check_rows_independent(int64_t m, int64_t k, DType dtype, const std::vector<int64_t>& ns,
                            std::mt19937& rng) {
  const int64_t most = ns.back();
  Tensor xd = to_device(random_host({most, k}, DType::kF32, rng));
  Tensor wd = to_device(random_host({m, k}, dtype, rng));
  Tensor bd = to_device(random_host({m}, DType::kF32, rng));
  Tensor all = first_rows_product(xd, most, wd, &bd);
  for (int64_t n : ns) {
    Tensor y = first_rows_product(xd, n, wd, &bd);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(0, std::memcmp(y.row(i).raw(), all.row(i).raw(), m * sizeof(float)))
          << "w " << dtype_name(dtype) << "[" << m << ", " << k << "], row " << i << " of " << n
          << " differs from the same row of " << most;
    }
  }
}

TEST(CudaMatmul, RowIndependentOfBatchWhenInvariant) {
  CAIRN_NEED_GPU();
  InvariantScope scope(true);
  std::mt19937 rng(14);
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    check_rows_independent(4099, 4096, dtype, {1, 7, 64, 300}, rng);
    check_rows_independent(33, 100, dtype, {1, 7, 64, 300}, rng);
  }
  check_rows_independent(4096, 4096, DType::kBF16, {1, 2, 3, 7, 64, 300, 8192}, rng);
  check_rows_independent(300, 1040, DType::kBF16, {1, 2, 3, 9, 17, 40},
                         rng);  // a last short k-tile
  check_rows_independent(14336, 4096, DType::kBF16, {1, 16, 300, 2048}, rng);
  check_rows_independent(1024, 14336, DType::kBF16, {1, 5, 16, 17, 64, 65, 300, 1000}, rng);
  check_rows_independent(200, 4096, DType::kF16, {1, 16, 17, 64, 65, 130}, rng);
  check_rows_independent(16384, 256, DType::kBF16, {1, 16, 33, 64, 128, 300}, rng);
}

// The shapes above reach every tile shape the tensor-core GEMM takes by default (the thin
// kernels' three configs up to 32 rows; then on Hopper the wgmma tiles up to 128 rows, elsewhere
// 64x32 or, for wide products, 64x128; 128x32, 128x128), so a row is compared across all of them
// (the test above would say nothing about a shape it never ran).
TEST(CudaMatmul, InvariantShapesCoverEveryTile) {
  CAIRN_NEED_GPU();
  const std::pair<int64_t, int64_t> cases[] = {
      {1, 4096},  {7, 4096},   {64, 4096}, {300, 4096}, {8192, 4096}, {1, 14336},
      {1, 1024},  {1, 200},    {130, 200}, {65, 1024},  {33, 16384},  {128, 16384},
      {5, 16384}, {16, 16384}, {17, 4096}, {20, 16384}, {128, 6144},  {128, 4096}};
  std::set<std::string> seen;
  for (auto [n, m] : cases) seen.insert(cuda::mma_gemm_tile_name(n, m));
  std::set<std::string> want = {"thin:nt1w4k256s2", "thin:nt1w4k256s4", "thin:nt2w4k256s3",
                                "128x32", "128x128"};
  const std::string family = cuda::wgmma_gemm_on() ? cuda::wgmma_gemm_family() : "";
  if (family == "ws")
    want.insert({"ws32x64s8k2w1", "ws64x64s6k2w1", "wt64x64s6", "wt64x128s4", "wt128x128s6"});
  else if (!family.empty())
    for (const char* tile : {"32x64s16", "64x64s12", "64x64s6", "64x128s4", "128x128s6"})
      want.insert(family + tile);
  else
    want.insert({"64x32", "64x128"});
  EXPECT_EQ(seen, want);
}

// Every tile shape of the tensor-core GEMM gives every element the same bits (each walks k
// in one order), so the tile may follow n: forced one by one on awkward shapes, with and
// without a bias, against the tile picked by n and m.
TEST(CudaMatmul, EveryTileGivesTheSameBits) {
  CAIRN_NEED_GPU();
  InvariantScope scope(true);
  std::mt19937 rng(21);
  for (auto [n, m, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 4096, 4096},
                         {37, 200, 1040},
                         {130, 1000, 4096},
                         {96, 17000, 2064}}) {
    const Tensor x = to_device(random_host({n, k}, DType::kF32, rng));
    const Tensor w = to_device(random_host({m, k}, DType::kBF16, rng));
    const Tensor b = to_device(random_host({m}, DType::kF32, rng));
    for (const Tensor* bias : {static_cast<const Tensor*>(nullptr), &b}) {
      Tensor yd = poisoned_device({n, m}, DType::kF32);
      ops::matmul(x, w, bias, yd);
      const Tensor picked = to_host(yd);
      for (const std::string& tile : cuda::mma_gemm_tile_names()) {
        cuda::force_mma_tile(tile);
        Tensor forced = poisoned_device({n, m}, DType::kF32);
        ops::matmul(x, w, bias, forced);
        cuda::force_mma_tile("");
        EXPECT_EQ(0, std::memcmp(to_host(forced).raw(), picked.raw(), picked.nbytes()))
            << "tile " << tile << " at n " << n << ", w [" << m << ", " << k << "]"
            << (bias ? ", bias" : "");
      }
    }
  }
}

// On Hopper, cuBLASLt's fixed algorithm (no split-K) and the tensor-core GEMM compute the
// same bits, with k whole and cut (one cuBLASLt product a part), so prefill-sized batches take
// cuBLASLt. Where this fails, rows stay invariant (the
// tensor-core GEMM serves every n) but prefill runs at about half the rate: worth knowing.
TEST(CudaMatmul, FixedCublasAgreesWithTensorCoreGemm) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(16);
  for (auto [m, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {1024, 4096}, {4096, 14336}}) {
    Tensor wd = to_device(random_host({m, k}, DType::kBF16, rng, 0.05f));
    Tensor bd = to_device(random_host({m}, DType::kF32, rng));
    for (int64_t split_from : {0, 512}) {  // k whole (the default), and cut
      SplitScope split(split_from);
      for (const Tensor* bias : std::initializer_list<const Tensor*>{nullptr, &bd}) {
        cuda::GemmLtShape cls;
        cls.m = m;
        cls.k = k;
        cls.dtype = DType::kBF16;
        cls.bias = bias != nullptr;
        EXPECT_TRUE(cuda::lt_agrees_with_mma(cls, wd, bias ? bias->data<float>() : nullptr))
            << "[" << m << ", " << k << "] bias " << (bias != nullptr) << " cut at "
            << cuda::gemm_cut(m, k);
      }
    }
  }
}

// w with the columns of k outside [from, to) zeroed (host, bf16).
Tensor keep_columns(const Tensor& w, int64_t from, int64_t to) {
  Tensor out = Tensor::empty(w.shape(), w.dtype());
  std::memcpy(out.raw(), w.raw(), w.nbytes());
  auto* rows = static_cast<uint16_t*>(out.raw());
  const int64_t k = w.dim(1);
  for (int64_t r = 0; r < w.dim(0); ++r)
    for (int64_t c = 0; c < k; ++c)
      if (c < from || c >= to) rows[r * k + c] = 0;
  return out;
}

// The order every tile follows with k cut (gemm_order.h): y = (first part + second part) +
// bias, each part a chain from zero. With the other part's weights zeroed a product gives one
// part's sum exactly (its zero chain adds +0), so the whole product must be their f32 sum, then
// the bias, bit for bit, at the row counts of the thin, wgmma or mma and cuBLASLt paths.
TEST(CudaMatmul, TheOrderAddsTwoPartsOfK) {
  CAIRN_NEED_GPU();
  InvariantScope scope(true);
  SplitScope split(512);
  std::mt19937 rng(31);
  for (auto [m, k] : {std::pair<int64_t, int64_t>{1000, 4096}, {300, 1040}, {4096, 14336}}) {
    const int64_t h = cuda::gemm_cut(m, k);
    ASSERT_EQ(cuda::k_split(k), h);
    const Tensor w = random_host({m, k}, DType::kBF16, rng, 0.05f);
    const Tensor bias = random_host({m}, DType::kF32, rng);
    const Tensor wd = to_device(w), bd = to_device(bias);
    const Tensor first = to_device(keep_columns(w, 0, h)),
                 second = to_device(keep_columns(w, h, k));
    for (int64_t n : {1, 7, 17, 64, 130, 300}) {
      const Tensor x = to_device(random_host({n, k}, DType::kF32, rng));
      const Tensor y = first_rows_product(x, n, wd, &bd);
      const Tensor a = first_rows_product(x, n, first, nullptr);
      const Tensor b = first_rows_product(x, n, second, nullptr);
      int64_t differ = 0;
      for (int64_t i = 0; i < n * m; ++i) {
        const float want = (a.data<float>()[i] + b.data<float>()[i]) + bias.data<float>()[i % m];
        differ += std::memcmp(&want, y.data<float>() + i, sizeof(float)) != 0;
      }
      EXPECT_EQ(0, differ) << "w [" << m << ", " << k << "] at n " << n << " ("
                           << cuda::mma_gemm_tile_name(n, m) << ")";
    }
  }
}

// With k cut, rows stay independent of the batch and every tile gives the same bits (the
// default's tests above, on the two-part order).
TEST(CudaMatmul, CutOrderKeepsRowsAndTiles) {
  CAIRN_NEED_GPU();
  InvariantScope scope(true);
  SplitScope split(512);
  std::mt19937 rng(32);
  check_rows_independent(4096, 4096, DType::kBF16, {1, 3, 16, 17, 64, 300}, rng);
  check_rows_independent(1024, 14336, DType::kBF16, {1, 5, 32, 65, 130}, rng);
  check_rows_independent(300, 1040, DType::kF16, {1, 9, 40, 129}, rng);
  const Tensor x = to_device(random_host({40, 2064}, DType::kF32, rng));
  const Tensor w = to_device(random_host({9000, 2064}, DType::kBF16, rng));
  ASSERT_LT(cuda::gemm_cut(9000, 2064), 2064);
  Tensor yd = poisoned_device({40, 9000}, DType::kF32);
  ops::matmul(x, w, nullptr, yd);
  const Tensor picked = to_host(yd);
  for (const std::string& tile : cuda::mma_gemm_tile_names()) {
    cuda::force_mma_tile(tile);
    Tensor forced = poisoned_device({40, 9000}, DType::kF32);
    ops::matmul(x, w, nullptr, forced);
    cuda::force_mma_tile("");
    EXPECT_EQ(0, std::memcmp(to_host(forced).raw(), picked.raw(), picked.nbytes())) << tile;
  }
}

// The cut's default follows the device (mma_gemm.h): from depth 8192 where the memory's peak
// bandwidth exceeds 30 GB/s a multiprocessor (an H200), else none (an H100).
TEST(CudaMatmul, TheDefaultCutFollowsTheDevice) {
  CAIRN_NEED_GPU();
  if (std::getenv("CAIRN_GEMM_SPLIT_K_FROM") != nullptr) GTEST_SKIP() << "set by the environment";
  int dev = 0, clock_khz = 0, bus_bits = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev), cudaSuccess);
  const double per_sm = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9 / cuda::sm_count();
  std::printf("[cut] %.1f GB/s a multiprocessor at peak: k cut from depth %ld\n", per_sm,
              static_cast<long>(cuda::gemm_split_from()));
  EXPECT_EQ(cuda::gemm_split_from(), per_sm > 30.0 ? 8192 : 0);
}

TEST(CudaMatmul, SwitchToggles) {
  // The switch is plain state: no device needed.
  const bool saved = cuda::batch_invariant();
  cuda::set_batch_invariant(false);
  EXPECT_FALSE(cuda::batch_invariant());
  cuda::set_batch_invariant(true);
  EXPECT_TRUE(cuda::batch_invariant());
  cuda::set_batch_invariant(saved);
}

}  // namespace
}  // namespace cairn
