// CUDA rms_norm and layer_norm against the CPU reference on awkward row lengths
// (both block sizes, float4 and scalar reads), in place, and row independence:
// a row's output bits are the same alone, shifted off float4 alignment, and
// inside a batch of 64 rows.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "backend/cpu/reference/reference.h"
#include "backend/ops.h"
#include "gpu_test_util.h"
#include "row_test_util.h"

namespace cairn::gpu_test {
namespace {

constexpr double kF32Bound = 1e-5;
// 4096 and 16384 take the float4 reads; 16384 and 20011 the 1024-thread blocks.
// rms_norm holds rows of up to 8 · 256 groups of 4 in registers; 12001 and the long rows read
// twice.
const int64_t kWidths[] = {1, 3, 37, 1023, 4096, 4099, 12001, 16384, 20011, 40000};

int64_t rows_for(int64_t d) {
  return d >= 4096 ? 9 : d >= 1000 ? 67 : 1000;
}

enum class Norm { kRms, kLayer, kLayerNoBias };

void run_norm(Norm kind, const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) {
  if (kind == Norm::kRms) return ops::rms_norm(x, w, 1e-6f, y);
  ops::layer_norm(x, w, kind == Norm::kLayer ? &b : nullptr, 1e-5f, y);
}

void run_ref(Norm kind, const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) {
  if (kind == Norm::kRms) return ops::ref::rms_norm(x, w, 1e-6f, y);
  ops::ref::layer_norm(x, w, kind == Norm::kLayer ? &b : nullptr, 1e-5f, y);
}

const char* name(Norm kind) {
  return kind == Norm::kRms ? "rms_norm" : kind == Norm::kLayer ? "layer_norm" : "layer_norm(b=0)";
}

TEST(GpuNorms, MatchReference) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(11);
  for (Norm kind : {Norm::kRms, Norm::kLayer, Norm::kLayerNoBias})
    for (int64_t d : kWidths) {
      const int64_t n = rows_for(d);
      Tensor x = random_host({n, d}, DType::kF32, rng, 5.0f);
      Tensor w = random_host({d}, DType::kF32, rng), b = random_host({d}, DType::kF32, rng);
      Tensor ref = Tensor::empty({n, d}, DType::kF32);
      run_ref(kind, x, w, b, ref);
      Tensor y = poisoned_device({n, d}, DType::kF32);
      run_norm(kind, to_device(x), to_device(w), to_device(b), y);
      EXPECT_LE(rel_error(to_host(y), ref), kF32Bound) << name(kind) << " d " << d;
    }
}

// add_rms_norm on the GPU: x += r and y the same bits as add then rms_norm on the GPU (both
// block sizes, float4 and scalar reads).
TEST(GpuNorms, AddRmsNormIsAddThenRmsNorm) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(13);
  for (int64_t d : kWidths) {
    const int64_t n = rows_for(d);
    const Tensor xh = random_host({n, d}, DType::kF32, rng, 5.0f);
    const Tensor r = to_device(random_host({n, d}, DType::kF32, rng));
    const Tensor w = to_device(random_host({d}, DType::kF32, rng));
    Tensor x = to_device(xh), x2 = to_device(xh);
    Tensor y = poisoned_device({n, d}, DType::kF32), y2 = poisoned_device({n, d}, DType::kF32);
    ops::add_rms_norm(x, r, w, 1e-6f, y);
    ops::add(x2, r, x2);
    ops::rms_norm(x2, w, 1e-6f, y2);
    const Tensor a = to_host(x), b = to_host(x2), ya = to_host(y), yb = to_host(y2);
    EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0) << "x, d " << d;
    EXPECT_EQ(std::memcmp(ya.raw(), yb.raw(), ya.nbytes()), 0) << "y, d " << d;
  }
}

TEST(GpuNorms, ThreeDimInputAndInPlace) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(12);
  for (Norm kind : {Norm::kRms, Norm::kLayer}) {
    Tensor x = random_host({5, 7, 129}, DType::kF32, rng, 3.0f);
    Tensor w = random_host({129}, DType::kF32, rng), b = random_host({129}, DType::kF32, rng);
    Tensor ref = Tensor::empty(x.shape(), DType::kF32);
    run_ref(kind, x, w, b, ref);
    Tensor xd = to_device(x), wd = to_device(w), bd = to_device(b);
    Tensor y = poisoned_device(x.shape(), DType::kF32);
    run_norm(kind, xd, wd, bd, y);
    Tensor out_of_place = to_host(y);
    EXPECT_LE(rel_error(out_of_place, ref), kF32Bound) << name(kind);
    run_norm(kind, xd, wd, bd, xd);  // y aliases x
    EXPECT_TRUE(bit_equal(to_host(xd), out_of_place)) << name(kind) << " in place";
  }
}

TEST(GpuNorms, RowIndependentOfBatch) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(13);
  for (Norm kind : {Norm::kRms, Norm::kLayer})
    for (int64_t d : {int64_t{37}, int64_t{4096}, int64_t{20000}}) {
      Tensor x = random_host({64, d}, DType::kF32, rng, 4.0f);
      Tensor w = random_host({d}, DType::kF32, rng), b = random_host({d}, DType::kF32, rng);
      Tensor wd = to_device(w), bd = to_device(b);
      Tensor y = poisoned_device({64, d}, DType::kF32);
      run_norm(kind, to_device(x), wd, bd, y);
      Tensor batch = to_host(y);
      for (int64_t i : {int64_t{0}, int64_t{31}, int64_t{63}})
        for (bool shifted : {false, true}) {
          Tensor alone = poisoned_device({1, d}, DType::kF32);
          run_norm(kind, device_row(x, i, shifted), wd, bd, alone);
          EXPECT_TRUE(bit_equal(to_host(alone), batch.slice_rows(i, i + 1)))
              << name(kind) << " d " << d << " row " << i << (shifted ? " shifted" : "");
        }
    }
}

}  // namespace
}  // namespace cairn::gpu_test
