// Rank contexts (backend/cuda/rank_context.h): a thread bound to a device gets streams and the
// ops' buffers of its own, so two ranks driving their GPUs at once (here both on one GPU, the
// hardest case: the same memory, the same kernels) each get exactly what one thread alone gets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/rank_context.h"
#include "backend/device.h"
#include "backend/on_device.h"
#include "backend/ops.h"
#include "core/error.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

TEST(CudaRankContext, ABoundThreadHasStreamsOfItsOwn) {
  CAIRN_NEED_GPU();
  const cudaStream_t process_ops = cuda::stream(), process_copies = cuda::copy_stream();
  cudaStream_t ops = nullptr, copies = nullptr, unbound = nullptr;
  int device = -1;
  std::thread([&] {
    unbound = cuda::stream();
    cuda::bind_thread_device(0);
    ops = cuda::stream(), copies = cuda::copy_stream(), device = cuda::context_device();
  }).join();
  EXPECT_EQ(unbound, process_ops) << "a thread that never binds shares the process's";
  EXPECT_NE(ops, process_ops);
  EXPECT_NE(copies, process_copies);
  EXPECT_NE(ops, copies);
  EXPECT_EQ(device, 0);
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  std::thread([&] { EXPECT_THROW(cuda::bind_thread_device(n), Error); }).join();
}

// One rank's work: a product through the thin kernels (x rounded in the scratch buffer), one
// through the tiles, and decode attention over 3 sequences (its table uploaded, partials in the
// workspace). Returns the outputs, copied to the host.
struct RankInputs {
  Tensor w, x_thin, x_tile, q, k, v;
};

// On the host, made on the test's thread, so that the ranks' threads do device work only.
RankInputs host_inputs(uint32_t seed) {
  std::mt19937 rng(seed);
  return {
      random_host({384, 512}, DType::kBF16, rng),   random_host({5, 512}, DType::kF32, rng),
      random_host({100, 512}, DType::kF32, rng),    random_host({3, 8, 64}, DType::kF32, rng),
      random_host({600, 2, 64}, DType::kBF16, rng), random_host({600, 2, 64}, DType::kBF16, rng)};
}

// On the calling thread's context.
RankInputs device_inputs(const RankInputs& h) {
  return {to_device(h.w), to_device(h.x_thin), to_device(h.x_tile),
          to_device(h.q), to_device(h.k),      to_device(h.v)};
}

std::vector<Tensor> run_rank(const RankInputs& in) {
  Tensor y_thin = poisoned_device({5, 384}, DType::kF32);
  Tensor y_tile = poisoned_device({100, 384}, DType::kF32);
  ops::matmul(in.x_thin, in.w, nullptr, y_thin);
  ops::matmul(in.x_tile, in.w, nullptr, y_tile);
  const std::vector<ops::AttentionSeq> seqs{
      {&in.k, &in.v, 0, 1, 600}, {&in.k, &in.v, 1, 1, 257}, {&in.k, &in.v, 2, 1, 33}};
  const std::vector<int32_t> q_pos{599, 256, 32};
  Tensor out = poisoned_device({3, 8, 64}, DType::kF32);
  ops::attention_seqs(in.q, seqs, q_pos, ops::AttentionParams{0.125f, 0.0f, 0}, out);
  return {to_host(y_thin), to_host(y_tile), to_host(out)};
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// OnDevice (backend/on_device.h) on the thread's own device changes nothing; on another GPU it
// runs the scope's work there, in a context kept for such visits, and puts the thread back; on
// a GPU not present it refuses and leaves the thread as it was.
TEST(CudaRankContext, OnDeviceVisitsAnotherGpuAndComesBack) {
  CAIRN_NEED_GPU();
  const cudaStream_t own = cuda::stream();
  {
    const OnDevice here({DeviceKind::kCuda, 0});
    EXPECT_EQ(cuda::stream(), own) << "the thread's own device: no switch";
  }
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  try {
    const OnDevice absent({DeviceKind::kCuda, n});
    FAIL() << "entered GPU " << n << " of " << n;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(cuda::stream(), own);
  EXPECT_EQ(cuda::context_device(), 0);
  if (n < 2) GTEST_SKIP() << "one GPU: the visit to another is not run";
  std::mt19937 rng(9);
  const Tensor h = random_host({33, 7}, DType::kF32, rng);
  Tensor back = Tensor::empty(h.shape(), DType::kF32);
  {
    const OnDevice there({DeviceKind::kCuda, 1});
    EXPECT_EQ(cuda::context_device(), 1);
    EXPECT_NE(cuda::stream(), own);
    const Tensor d = to_device(h);
    EXPECT_EQ(d.device(), (Device{DeviceKind::kCuda, 1}));
    DeviceBackend& dev = device_backend(DeviceKind::kCuda);
    dev.copy(d, back);  // waited for as the scope ends
  }
  EXPECT_TRUE(same_bytes(back, h));
  EXPECT_EQ(cuda::stream(), own);
  EXPECT_EQ(cuda::context_device(), 0);
}

TEST(CudaRankContext, TwoRanksOnOneGpuGetWhatOneThreadGets) {
  CAIRN_NEED_GPU();
  constexpr int kRanks = 2, kRounds = 20;
  std::vector<RankInputs> hosts;
  std::vector<std::vector<Tensor>> want;
  for (int r = 0; r < kRanks; ++r) {
    hosts.push_back(host_inputs(100 + r));
    want.push_back(run_rank(device_inputs(hosts.back())));
  }
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r)
    ranks.emplace_back([&, r] {
      try {
        cuda::bind_thread_device(0);
        const RankInputs in = device_inputs(hosts[r]);
        for (int i = 0; i < kRounds && errors[r].empty(); ++i) {
          const std::vector<Tensor> got = run_rank(in);
          for (size_t o = 0; o < got.size(); ++o)
            if (!same_bytes(got[o], want[r][o]))
              errors[r] = "round " + std::to_string(i) + ", output " + std::to_string(o);
        }
      } catch (const Error& e) {
        errors[r] = e.what();
      }
    });
  for (std::thread& t : ranks) t.join();
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

}  // namespace
}  // namespace cairn::gpu_test
