// upload() (cuda_runtime.h): small host arguments reach device memory in stream order; the
// same bytes still held by a slot are served again without a copy, and a returned pointer
// keeps its bytes while later uploads (up to the contract's four) are made.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "gpu_test_util.h"

namespace cairn {
namespace {

std::vector<int32_t> read_back(const int32_t* d, size_t count) {
  std::vector<int32_t> out(count);
  CAIRN_CUDA_CHECK(cudaMemcpyAsync(out.data(), d, count * sizeof(int32_t), cudaMemcpyDeviceToHost,
                                   cuda::stream()));
  CAIRN_CUDA_CHECK(cudaStreamSynchronize(cuda::stream()));
  return out;
}

// Up to a whole slot (256 KiB): a batch's page table, the same for every layer of a decode step,
// is copied once a step, not once a layer. Bytes that differ in their last word get a slot of
// their own.
TEST(CudaUpload, IdenticalBytesReuseTheirSlot) {
  CAIRN_NEED_GPU();
  for (const size_t count : {size_t{64}, size_t{2176}, size_t{65536}}) {  // 256 B, 8.5, 256 KiB
    std::vector<int32_t> a(count), b(count);
    std::iota(a.begin(), a.end(), 1000);
    std::iota(b.begin(), b.end(), 2000);
    const int32_t* da = cuda::upload(std::span<const int32_t>(a));
    // Fill the guard distance so that a's slot may be reused.
    for (int i = 0; i < 4; ++i) cuda::upload(std::span<const int32_t>(b.data(), 1 + i));
    const int32_t* again = cuda::upload(std::span<const int32_t>(a));
    EXPECT_EQ(da, again) << count << " values";
    const int32_t* db = cuda::upload(std::span<const int32_t>(b));
    EXPECT_NE(da, db);
    std::vector<int32_t> last = a;
    last.back() += 1;
    const int32_t* dl = cuda::upload(std::span<const int32_t>(last));
    EXPECT_NE(dl, da) << count << " values, the last one differing";
    EXPECT_EQ(read_back(again, a.size()), a);
    EXPECT_EQ(read_back(db, b.size()), b);
    EXPECT_EQ(read_back(dl, last.size()), last);
  }
}

// An op uploads several arguments before it launches: the first pointer must survive the
// next four uploads, whether it was copied or reused.
TEST(CudaUpload, PointerOutlivesFourMoreUploads) {
  CAIRN_NEED_GPU();
  for (int round = 0; round < 40; ++round) {
    std::vector<int32_t> first(16, round % 3);  // repeats: some rounds reuse a slot
    const int32_t* d = cuda::upload(std::span<const int32_t>(first));
    for (int i = 0; i < 4; ++i) {
      std::vector<int32_t> other(8, 100 + round * 4 + i);
      cuda::upload(std::span<const int32_t>(other));
    }
    ASSERT_EQ(read_back(d, first.size()), first) << "round " << round;
  }
}

}  // namespace
}  // namespace cairn
