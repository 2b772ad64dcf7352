// Fused projections (model/fused_projections.h) rest on two promises checked here
// on the GPU: with the batch-invariant switch on, the product with weights
// stacked by rows gives each part's columns bit for bit (q | k | v of an 8B
// shape, gate | up, rows of x from 1 to 300, both GEMM paths); and
// split_columns hands each part exactly its columns.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backend/cuda/matmul.h"
#include "backend/device.h"
#include "backend/ops.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

// Columns [at, at + width) of every row of y [n, m] (host), row by row.
std::vector<uint8_t> columns(const Tensor& y, int64_t at, int64_t width) {
  std::vector<uint8_t> out;
  for (int64_t r = 0; r < y.dim(0); ++r) {
    const auto* row = reinterpret_cast<const uint8_t*>(y.data<float>() + r * y.dim(1) + at);
    out.insert(out.end(), row, row + width * 4);
  }
  return out;
}

void check_stacked(const std::vector<int64_t>& widths, int64_t k, std::mt19937& rng) {
  int64_t total = 0;
  for (int64_t w : widths) total += w;
  const Tensor wh = random_host({total, k}, DType::kBF16, rng, 0.05f);
  const Tensor stacked = to_device(wh);
  for (int64_t n : {1, 7, 64, 300}) {
    const Tensor x = to_device(random_host({n, k}, DType::kF32, rng));
    Tensor y = poisoned_device({n, total}, DType::kF32);
    ops::matmul(x, stacked, nullptr, y);
    const Tensor all = to_host(y);
    int64_t at = 0;
    for (int64_t w : widths) {
      const Tensor part = to_device(wh.slice_rows(at, at + w));
      Tensor yp = poisoned_device({n, w}, DType::kF32);
      ops::matmul(x, part, nullptr, yp);
      const Tensor alone = to_host(yp);
      const std::vector<uint8_t> want(static_cast<const uint8_t*>(alone.raw()),
                                      static_cast<const uint8_t*>(alone.raw()) + alone.nbytes());
      EXPECT_EQ(columns(all, at, w), want)
          << "part at " << at << " of width " << w << ", " << n << " rows";
      at += w;
    }
  }
}

TEST(FusedProjection, StackedWeightsGiveEachPartsColumnsBitwise) {
  CAIRN_NEED_GPU();
  const bool saved = cuda::batch_invariant();
  cuda::set_batch_invariant(true);
  std::mt19937 rng(21);
  check_stacked({4096, 1024, 1024}, 4096, rng);  // q | k | v
  check_stacked({1000, 1000}, 512, rng);         // gate | up, narrower
  cuda::set_batch_invariant(saved);
}

TEST(FusedProjection, SplitColumnsEqualsTheCpu) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(22);
  for (int64_t n : {1, 3, 129}) {
    const Tensor xh = random_host({n, 37}, DType::kF32, rng);
    const Tensor x = to_device(xh);
    Tensor a = poisoned_device({n, 16}, DType::kF32), b = poisoned_device({n, 21}, DType::kF32);
    std::vector<Tensor*> parts = {&a, &b};
    ops::split_columns(x, parts);
    Tensor ah = Tensor::empty({n, 16}, DType::kF32), bh = Tensor::empty({n, 21}, DType::kF32);
    std::vector<Tensor*> host_parts = {&ah, &bh};
    ops::split_columns(xh, host_parts);
    EXPECT_EQ(std::memcmp(to_host(a).raw(), ah.raw(), ah.nbytes()), 0) << n << " rows";
    EXPECT_EQ(std::memcmp(to_host(b).raw(), bh.raw(), bh.nbytes()), 0) << n << " rows";
  }
}

// Widths of four (moved as float4) and more parts than one launch takes (strided copies).
TEST(FusedProjection, SplitColumnsWideAndManyParts) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(23);
  for (const std::vector<int64_t>& widths :
       {std::vector<int64_t>{128, 32, 32}, std::vector<int64_t>(9, 4)}) {
    int64_t total = 0;
    for (int64_t w : widths) total += w;
    const Tensor xh = random_host({5, total}, DType::kF32, rng);
    const Tensor x = to_device(xh);
    std::vector<Tensor> dev, host;
    for (int64_t w : widths) {
      dev.push_back(poisoned_device({5, w}, DType::kF32));
      host.push_back(Tensor::empty({5, w}, DType::kF32));
    }
    std::vector<Tensor*> dp, hp;
    for (size_t i = 0; i < widths.size(); ++i) dp.push_back(&dev[i]), hp.push_back(&host[i]);
    ops::split_columns(x, dp);
    ops::split_columns(xh, hp);
    for (size_t i = 0; i < widths.size(); ++i)
      EXPECT_EQ(std::memcmp(to_host(dev[i]).raw(), host[i].raw(), host[i].nbytes()), 0)
          << widths.size() << " parts, part " << i;
  }
}

}  // namespace
}  // namespace cairn::gpu_test
