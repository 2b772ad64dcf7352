// The attentions writing bf16/f16 outputs (ops.h: the o product's input written rounded) give
// exactly their f32 outputs rounded, on every path that stores an output: split grids folded
// by their last blocks, by a combine grid a warp a row and by the staged combine a block a row;
// the narrow decode blocks; fused (prefill) grids; tensor-core (bf16 K/V) and CUDA-core (f32
// K/V) blocks; attention_seqs and the one-sequence attention. With the CUDA table's fused
// inputs on (the kernels round as they store) and off (ops.cpp converting the f32 output).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backend/device.h"
#include "backend/ops.h"
#include "core/dtype.h"
#include "gpu_test_util.h"
#include "row_test_util.h"

namespace cairn::gpu_test {
namespace {

const Device kGpu{DeviceKind::kCuda, 0};
constexpr int64_t kHeads = 8, kKvHeads = 2;

Tensor rounded(const Tensor& t, DType dtype) {
  Tensor r = empty_on(kGpu, t.shape(), dtype);
  ops::convert(t, r);
  return r;
}

// attention_seqs over sequences of (n_q, n_kv), K/V of `kv`, into an f32 out and one of `dtype`.
void expect_rounded_seqs(const std::vector<std::pair<int64_t, int64_t>>& shapes, DType kv,
                         int64_t hd, DType dtype, std::mt19937& rng, const std::string& what) {
  int64_t n_rows = 0;
  for (auto [n_q, n_kv] : shapes) n_rows += n_q;
  const Tensor q = to_device(random_host({n_rows, kHeads, hd}, DType::kF32, rng, 2.0f));
  std::vector<Tensor> ks, vs;
  std::vector<int32_t> positions;
  for (auto [n_q, n_kv] : shapes) {
    ks.push_back(to_device(random_host({n_kv, kKvHeads, hd}, kv, rng, 2.0f)));
    vs.push_back(to_device(random_host({n_kv, kKvHeads, hd}, kv, rng)));
    for (int64_t t = 0; t < n_q; ++t) positions.push_back(static_cast<int32_t>(n_kv - n_q + t));
  }
  std::vector<ops::AttentionSeq> seqs;
  int64_t row = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    seqs.push_back({&ks[i], &vs[i], row, shapes[i].first, shapes[i].second});
    row += shapes[i].first;
  }
  const ops::AttentionParams p{1.0f / std::sqrt(static_cast<float>(hd)), 0.0f, 0};
  Tensor out32 = poisoned_device(q.shape(), DType::kF32), out = poisoned_device(q.shape(), dtype);
  ops::attention_seqs(q, seqs, positions, p, out32);
  ops::attention_seqs(q, seqs, positions, p, out);
  EXPECT_TRUE(bit_equal(to_host(out), to_host(rounded(out32, dtype)))) << what;
  // the first sequence alone
  const auto [n_q, n_kv] = shapes.front();
  std::vector<int32_t> kv_pos(static_cast<size_t>(n_kv));
  for (int64_t j = 0; j < n_kv; ++j) kv_pos[static_cast<size_t>(j)] = static_cast<int32_t>(j);
  const Tensor q1 = q.slice_rows(0, n_q);
  const std::span<const int32_t> qp(positions.data(), static_cast<size_t>(n_q));
  Tensor one32 = poisoned_device(q1.shape(), DType::kF32), one = poisoned_device(q1.shape(), dtype);
  ops::attention(q1, ks[0], vs[0], qp, kv_pos, p, one32);
  ops::attention(q1, ks[0], vs[0], qp, kv_pos, p, one);
  EXPECT_TRUE(bit_equal(to_host(one), to_host(rounded(one32, dtype)))) << what << ", alone";
}

TEST(GpuRoundedIo, AttentionsWriteTheirF32OutputRounded) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(75);
  const std::vector<std::pair<int64_t, int64_t>> small = {{1, 513}, {1, 33}, {7, 260}};
  const std::vector<std::pair<int64_t, int64_t>> decode(64, {1, 300});
  const std::vector<std::pair<int64_t, int64_t>> long_rows = {{1, 4100}, {1, 2049}};
  const std::vector<std::pair<int64_t, int64_t>> prefill = {{256, 256}, {300, 700}, {64, 64}};
  for (bool fused : {true, false}) {
    FusedInputsScope scope(fused);
    for (DType dtype : {DType::kBF16, DType::kF16})
      for (DType kv : {DType::kBF16, DType::kF32})
        for (int64_t hd : {64, 128, 256}) {
          const std::string at = std::string(fused ? "fused" : "converted") + ", out " +
                                 std::string(dtype_name(dtype)) + ", K/V " +
                                 std::string(dtype_name(kv)) + ", head_dim " + std::to_string(hd);
          expect_rounded_seqs(small, kv, hd, dtype, rng, "small grid, " + at);
          expect_rounded_seqs(decode, kv, hd, dtype, rng, "decode batch, " + at);
          expect_rounded_seqs(long_rows, kv, hd, dtype, rng, "long rows, " + at);
          expect_rounded_seqs(prefill, kv, hd, dtype, rng, "prefill, " + at);
        }
  }
}

}  // namespace
}  // namespace cairn::gpu_test
