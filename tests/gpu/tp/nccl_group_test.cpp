// The NCCL group against the in-process one: the rank-order sum kernel adds a
// gathered [N, count] buffer's rows in rank order, bit for bit as the host does;
// a group of one GPU leaves an all-reduce's tensor as it was and copies an
// all-gather; with several GPUs (one thread per GPU) the all-reduce gives the
// in-process group's bits on every rank.
#include "backend/cuda/nccl/nccl_group.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <thread>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/nccl/rank_sum.h"
#include "backend/device.h"
#include "core/error.h"
#include "gpu_test_util.h"
#include "partials.h"

namespace cairn::gpu_test {
namespace {

TEST(NcclGroup, RankOrderSumEqualsTheHostsBitForBit) {
  CAIRN_NEED_GPU();
  for (int n : {1, 2, 3, 8}) {
    Tensor p = partials(n, 1001, static_cast<uint32_t>(n));
    Tensor dp = to_device(p);
    Tensor out = poisoned_device({1001}, DType::kF32);
    cuda::rank_order_sum(dp.data<float>(), n, 1001, out.data<float>(), cuda::stream());
    EXPECT_EQ(values(to_host(out)), host_sum(p, false)) << n << " ranks";
    if (n > 2) {
      EXPECT_NE(host_sum(p, false), host_sum(p, true)) << "the data tells orders apart";
    }
  }
}

TEST(NcclGroup, OneGpu) {
  CAIRN_NEED_GPU();
  NcclGroup g({0});
  ASSERT_EQ(g.size(), 1);
  Tensor p = partials(1, 257, 4);
  Tensor x = to_device(p.reshape({257}));
  g.rank(0).all_reduce_sum(x);
  EXPECT_EQ(values(to_host(x)), values(p));
  Tensor recv = poisoned_device({257}, DType::kF32);
  g.rank(0).all_gather(x, recv);
  g.rank(0).finish();
  EXPECT_EQ(values(to_host(recv)), values(p));
  Tensor host = Tensor::zeros({4}, DType::kF32);
  EXPECT_THROW(g.rank(0).all_reduce_sum(host), Error);
}

// Device memory of GPU `device` (the backend allocates on the first GPU only).
class GpuBuffer final : public Storage {
 public:
  GpuBuffer(void* p, size_t n, int device) : Storage(p, n, {DeviceKind::kCuda, device}) {}
  ~GpuBuffer() override { cudaFree(data()); }
  static Tensor make(int device, const Tensor& host) {
    void* p = nullptr;
    cuda::check(cudaSetDevice(device), "cudaSetDevice");
    cuda::check(cudaMalloc(&p, host.nbytes()), "cudaMalloc");
    cuda::check(cudaMemcpy(p, host.raw(), host.nbytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
    return Tensor::view_of(std::make_shared<GpuBuffer>(p, host.nbytes(), device), 0, host.shape(),
                           host.dtype());
  }
  static std::vector<float> read(const Tensor& t) {
    std::vector<float> out(static_cast<size_t>(t.numel()));
    cuda::check(cudaSetDevice(t.device().index), "cudaSetDevice");
    cuda::check(cudaMemcpy(out.data(), t.raw(), t.nbytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return out;
  }
};

TEST(NcclGroup, EveryGpuAllReduceEqualsTheInProcessGroup) {
  CAIRN_NEED_GPU();
  int n = 0;
  cuda::check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  if (n < 2) GTEST_SKIP() << "one GPU: the multi-GPU all-reduce needs two or more";
  std::vector<int> devices;
  for (int d = 0; d < n; ++d) devices.push_back(d);
  NcclGroup g(devices);
  const int64_t count = 4097;
  Tensor p = partials(n, count, 9);
  std::vector<std::vector<float>> got(static_cast<size_t>(n)), gathered(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      device_backend(DeviceKind::kCuda).bind_thread(r);  // the rank's stream is its context's
      Tensor x = GpuBuffer::make(r, p.slice_rows(r, r + 1).reshape({count}));
      Tensor recv = GpuBuffer::make(r, Tensor::zeros({n * count}, DType::kF32));
      g.rank(r).all_gather(x, recv);
      g.rank(r).finish();
      gathered[static_cast<size_t>(r)] = GpuBuffer::read(recv);
      g.rank(r).all_reduce_sum(x);
      g.rank(r).finish();
      got[static_cast<size_t>(r)] = GpuBuffer::read(x);
    });
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(got[static_cast<size_t>(r)], host_sum(p, false)) << "rank " << r;
    EXPECT_EQ(gathered[static_cast<size_t>(r)], values(p)) << "rank " << r;
  }
}

}  // namespace
}  // namespace cairn::gpu_test
