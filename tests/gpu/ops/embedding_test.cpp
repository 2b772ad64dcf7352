// CUDA embedding against the CPU reference: f32, bf16 and f16 tables of awkward
// widths, repeated and edge ids; the conversion to f32 is exact, so the rows
// must match bit for bit. Ids outside [0, vocab) are Error(kInvalidArgument).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backend/cpu/reference/reference.h"
#include "backend/device.h"
#include "backend/ops.h"
#include "core/error.h"
#include "gpu_test_util.h"
#include "row_test_util.h"

namespace cairn::gpu_test {
namespace {

constexpr int64_t kVocab = 97;

std::vector<int32_t> random_ids(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int32_t> pick(0, kVocab - 1);
  std::vector<int32_t> ids = {0, kVocab - 1, 5, 5};
  while (ids.size() < n) ids.push_back(pick(rng));
  return ids;
}

TEST(GpuEmbedding, MatchesReferenceBitForBit) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(31);
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16})
    for (int64_t d : {1, 3, 37, 1023, 4099}) {
      Tensor table = random_host({kVocab, d}, dt, rng, 2.0f);
      const std::vector<int32_t> ids = random_ids(rng, 300);
      const int64_t n = static_cast<int64_t>(ids.size());
      Tensor ref = Tensor::empty({n, d}, DType::kF32);
      ops::ref::embedding(table, ids, ref);
      Tensor y = poisoned_device({n, d}, DType::kF32);
      ops::embedding(to_device(table), ids, y);
      Tensor got = to_host(y);
      EXPECT_LE(rel_error(got, ref), 1e-5) << dtype_name(dt) << " d " << d;
      EXPECT_TRUE(bit_equal(got, ref)) << dtype_name(dt) << " d " << d;
    }
}

void expect_invalid(const Tensor& table, const std::vector<int32_t>& ids) {
  Tensor y = poisoned_device({static_cast<int64_t>(ids.size()), table.dim(1)}, DType::kF32);
  try {
    ops::embedding(table, ids, y);
    ADD_FAILURE() << "no error for id " << ids.back();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
  }
}

TEST(GpuEmbedding, IdOutOfRangeIsInvalidArgument) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(32);
  Tensor table = to_device(random_host({kVocab, 16}, DType::kBF16, rng));
  expect_invalid(table, {0, 3, kVocab});
  expect_invalid(table, {-1});
  expect_invalid(table, {1, 2, 1 << 30});
}

TEST(GpuEmbedding, NoIdsIsANoOp) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(33);
  Tensor table = to_device(random_host({kVocab, 8}, DType::kF32, rng));
  Tensor y = empty_on({DeviceKind::kCuda, 0}, {0, 8}, DType::kF32);
  EXPECT_NO_THROW(ops::embedding(table, {}, y));
  device_backend(DeviceKind::kCuda).synchronize();
}

}  // namespace
}  // namespace cairn::gpu_test
