// CUDA softmax and log_softmax against the CPU reference on awkward row lengths
// (both block sizes, float4 and scalar reads), with masked (-inf) logits, in
// place, and row independence: a row's output bits are the same alone, shifted
// off float4 alignment, and inside a batch of 64 rows.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/cpu/reference/reference.h"
#include "backend/ops.h"
#include "gpu_test_util.h"
#include "row_test_util.h"

namespace cairn::gpu_test {
namespace {

constexpr double kF32Bound = 1e-5;
const int64_t kWidths[] = {1, 3, 37, 1023, 4096, 4099, 16384, 151936};

int64_t rows_for(int64_t d) {
  return d >= 100000 ? 3 : d >= 4096 ? 9 : d >= 1000 ? 67 : 1000;
}

void run(bool log, const Tensor& x, Tensor& y) {
  if (log) return ops::log_softmax(x, y);
  ops::softmax(x, y);
}

void run_ref(bool log, const Tensor& x, Tensor& y) {
  if (log) return ops::ref::log_softmax(x, y);
  ops::ref::softmax(x, y);
}

const char* name(bool log) {
  return log ? "log_softmax" : "softmax";
}

TEST(GpuSoftmax, MatchReference) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(21);
  for (bool log : {false, true})
    for (int64_t d : kWidths)
      for (float scale : {1.0f, 30.0f}) {
        const int64_t n = rows_for(d);
        Tensor x = random_host({n, d}, DType::kF32, rng, scale);
        Tensor ref = Tensor::empty({n, d}, DType::kF32);
        run_ref(log, x, ref);
        Tensor y = poisoned_device({n, d}, DType::kF32);
        run(log, to_device(x), y);
        EXPECT_LE(rel_error(to_host(y), ref), kF32Bound)
            << name(log) << " d " << d << " scale " << scale;
      }
}

TEST(GpuSoftmax, MaskedLogitsGetZero) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(22);
  Tensor x = random_host({5, 1001}, DType::kF32, rng, 4.0f);
  for (int64_t i = 0; i < x.numel(); i += 3) x.data<float>()[i] = -INFINITY;
  Tensor ref = Tensor::empty(x.shape(), DType::kF32);
  ops::ref::softmax(x, ref);
  Tensor y = poisoned_device(x.shape(), DType::kF32);
  ops::softmax(to_device(x), y);
  Tensor got = to_host(y);
  EXPECT_LE(rel_error(got, ref), kF32Bound);
  for (int64_t i = 0; i < x.numel(); i += 3) ASSERT_EQ(got.data<float>()[i], 0.0f) << i;
}

TEST(GpuSoftmax, InPlaceEqualsOutOfPlace) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(23);
  for (bool log : {false, true}) {
    Tensor x = random_host({4, 3, 333}, DType::kF32, rng, 6.0f);
    Tensor xd = to_device(x);
    Tensor y = poisoned_device(x.shape(), DType::kF32);
    run(log, xd, y);
    Tensor out_of_place = to_host(y);
    run(log, xd, xd);
    EXPECT_TRUE(bit_equal(to_host(xd), out_of_place)) << name(log);
  }
}

TEST(GpuSoftmax, RowIndependentOfBatch) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(24);
  for (bool log : {false, true})
    for (int64_t d : {int64_t{37}, int64_t{4096}, int64_t{32000}}) {
      Tensor x = random_host({64, d}, DType::kF32, rng, 8.0f);
      Tensor y = poisoned_device({64, d}, DType::kF32);
      run(log, to_device(x), y);
      Tensor batch = to_host(y);
      for (int64_t i : {int64_t{0}, int64_t{31}, int64_t{63}})
        for (bool shifted : {false, true}) {
          Tensor alone = poisoned_device({1, d}, DType::kF32);
          run(log, device_row(x, i, shifted), alone);
          EXPECT_TRUE(bit_equal(to_host(alone), batch.slice_rows(i, i + 1)))
              << name(log) << " d " << d << " row " << i << (shifted ? " shifted" : "");
        }
    }
}

}  // namespace
}  // namespace cairn::gpu_test
