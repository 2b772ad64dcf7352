// The peer group (backend/cuda/peer_group.h): ranks as threads bound to a GPU (rank contexts),
// several on one GPU or one a GPU. The all-reduce gives the in-process group's bits (the rank
// order sum) on every rank whatever the order the ranks arrive in, round after round, and
// waits on the GPU for a buffer still being written; the all-gather places each rank's values
// at its offset; counts that differ fail on every rank; an abort wakes a rank left waiting, and
// reset makes the group usable again.
#include "backend/cuda/peer_group.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "backend/cuda/cuda_runtime.h"
#include "backend/device.h"
#include "core/error.h"
#include "gpu_test_util.h"
#include "partials.h"
#include "rank_threads_util.h"

namespace cairn::gpu_test {
namespace {

DeviceBackend& gpu() {
  return device_backend(DeviceKind::kCuda);
}

// Every rank all-reduces its row of p after a random delay, on a thread bound to devices[r];
// returns what each rank's buffer holds after.
std::vector<std::vector<float>> all_reduce(PeerGroup& g, const std::vector<int>& devices,
                                           const Tensor& p, uint32_t seed) {
  std::vector<std::vector<float>> got(devices.size());
  const int64_t count = p.dim(1);
  tp::test::run_ranks(g, [&](int r) {
    gpu().bind_thread(devices[static_cast<size_t>(r)]);
    Tensor x = to_device(p.slice_rows(r, r + 1).reshape({count}));
    std::mt19937 rng(seed + static_cast<uint32_t>(r));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    g.rank(r).all_reduce_sum(x);
    got[static_cast<size_t>(r)] = values(to_host(x));
  });
  return got;
}

TEST(PeerGroup, RanksSharingOneGpuSumInRankOrderWhateverTheArrival) {
  CAIRN_NEED_GPU();
  for (int n : {1, 2, 3, 4, 8}) {
    const std::vector<int> devices(static_cast<size_t>(n), 0);
    PeerGroup g(devices);
    for (uint32_t round = 0; round < 3; ++round) {
      Tensor p = partials(n, 4099, 10 * round + static_cast<uint32_t>(n));
      const std::vector<float> want = host_sum(p, false);
      if (n > 2) {
        ASSERT_NE(want, host_sum(p, true)) << "the data tells orders apart";
      }
      std::vector<std::vector<float>> got = all_reduce(g, devices, p, round);
      for (int r = 0; r < n; ++r)
        EXPECT_EQ(got[static_cast<size_t>(r)], want)
            << n << " ranks, round " << round << ", rank " << r;
    }
  }
}

TEST(PeerGroup, AllGatherPlacesEachRanksValuesOnEveryRank) {
  CAIRN_NEED_GPU();
  const int n = 3;
  const int64_t count = 515;
  PeerGroup g({0, 0, 0});
  Tensor p = partials(n, count, 5);
  std::vector<std::vector<float>> got(n);
  tp::test::run_ranks(g, [&](int r) {
    gpu().bind_thread(0);
    Tensor send = to_device(p.slice_rows(r, r + 1).reshape({count}));
    Tensor recv = poisoned_device({n * count}, DType::kF32);
    g.rank(r).all_gather(send, recv);
    g.rank(r).finish();
    got[static_cast<size_t>(r)] = values(to_host(recv));
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(got[static_cast<size_t>(r)], values(p)) << "rank " << r;
}

// The collectives are ordered on the GPU, not the host: rank 0's buffer is written by a kernel
// queued behind a 30 ms pause of its stream, long after rank 0 has called the all-reduce; every
// rank still adds rank 0's values.
TEST(PeerGroup, ABufferStillBeingWrittenIsWaitedFor) {
  CAIRN_NEED_GPU();
  const int64_t count = 1 << 16;
  PeerGroup g({0, 0});
  std::vector<std::vector<float>> got(2);
  tp::test::run_ranks(g, [&](int r) {
    gpu().bind_thread(0);
    Tensor x = empty_on({DeviceKind::kCuda, 0}, {count}, DType::kF32);
    if (r == 0) {
      auto pause = [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(30)); };
      ASSERT_EQ(cudaLaunchHostFunc(cuda::stream(), pause, nullptr), cudaSuccess);
    }
    gpu().fill_uniform(x, 100 + static_cast<uint64_t>(r), 0.0f, 1.0f);  // x[i] = uniform_at
    g.rank(r).all_reduce_sum(x);
    g.rank(r).finish();
    got[static_cast<size_t>(r)] = values(to_host(x));
  });
  std::vector<float> want(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    want[static_cast<size_t>(i)] =
        uniform_at(100, static_cast<uint64_t>(i)) + uniform_at(101, static_cast<uint64_t>(i));
  EXPECT_EQ(got[0], want);
  EXPECT_EQ(got[1], want) << "the rank whose peer's buffer came late";
}

TEST(PeerGroup, CountsThatDifferFailOnEveryRankAndTheGroupGoesOn) {
  CAIRN_NEED_GPU();
  PeerGroup g({0, 0});
  std::vector<int> failed(2, 0);
  tp::test::run_ranks(g, [&](int r) {
    gpu().bind_thread(0);
    Tensor x = to_device(Tensor::zeros({10 + r}, DType::kF32));
    try {
      g.rank(r).all_reduce_sum(x);
    } catch (const Error& e) {
      failed[static_cast<size_t>(r)] = e.code() == ErrorCode::kInvalidArgument ? 1 : 2;
    }
  });
  EXPECT_EQ(failed, std::vector<int>({1, 1}));
  Tensor p = partials(2, 64, 3);
  std::vector<std::vector<float>> got = all_reduce(g, {0, 0}, p, 7);
  EXPECT_EQ(got[1], host_sum(p, false)) << "the next collective";
}

TEST(PeerGroup, AnAbortWakesARankLeftWaitingAndResetRestoresTheGroup) {
  CAIRN_NEED_GPU();
  PeerGroup g({0, 0});
  ErrorCode code = ErrorCode::kInternal;
  std::thread waiting([&] {
    gpu().bind_thread(0);
    Tensor x = to_device(Tensor::zeros({8}, DType::kF32));
    try {
      g.rank(0).all_reduce_sum(x);  // rank 1 never comes
    } catch (const Error& e) {
      code = e.code();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  g.rank(1).abort();
  waiting.join();
  EXPECT_EQ(code, ErrorCode::kUnavailable);
  g.rank(0).reset();
  Tensor p = partials(2, 33, 8);
  EXPECT_EQ(all_reduce(g, {0, 0}, p, 1)[0], host_sum(p, false));
}

TEST(PeerGroup, RefusesWhatItCannotRun) {
  CAIRN_NEED_GPU();
  EXPECT_THROW(PeerGroup(std::vector<int>(9, 0)), Error) << "more than 8 ranks";
  EXPECT_THROW(PeerGroup(std::vector<int>{}), Error) << "no rank";
  EXPECT_THROW(PeerGroup({0, gpu().device_count()}), Error) << "a GPU not present";
  PeerGroup one({0});
  Tensor host = Tensor::zeros({4}, DType::kF32);
  EXPECT_THROW(one.rank(0).all_reduce_sum(host), Error) << "a host tensor";
}

// Where there are several GPUs, one rank a GPU (peer access); skipped with one.
TEST(PeerGroup, OneRankAGpuSumsInRankOrder) {
  CAIRN_NEED_GPU();
  const int n = gpu().device_count();
  if (n < 2) GTEST_SKIP() << "one GPU: this case needs two or more";
  std::vector<int> devices;
  for (int d = 0; d < std::min(n, 8); ++d) devices.push_back(d);
  PeerGroup g(devices);
  Tensor p = partials(static_cast<int>(devices.size()), 4097, 11);
  std::vector<std::vector<float>> got = all_reduce(g, devices, p, 2);
  for (size_t r = 0; r < got.size(); ++r) EXPECT_EQ(got[r], host_sum(p, false)) << "rank " << r;
}

}  // namespace
}  // namespace cairn::gpu_test
