// A cut k's two parts run at once and joined at the store (backend/cuda/wgmma_stream.h, the
// join's counters in wgmma_join.cuh): the two launches' bits on every streamed tile, launch
// after launch (each tile's counter back at zero), replayed from a captured graph, and on two
// contexts of one GPU at once (each with counters of its own).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "backend/cuda/mma_gemm.h"
#include "backend/cuda/rank_context.h"
#include "backend/cuda/wgmma_gemm.h"
#include "backend/cuda/wgmma_stream.h"
#include "backend/device.h"
#include "backend/ops.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

// y = x · wᵀ + bias on tile `tile`, into a poisoned y, copied to the host.
Tensor product(const Tensor& x, const Tensor& w, const Tensor* bias, const std::string& tile) {
  cuda::force_mma_tile(tile);
  Tensor y = poisoned_device({x.dim(0), w.dim(0)}, DType::kF32);
  ops::matmul(x, w, bias, y);
  cuda::force_mma_tile("");
  return to_host(y);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

std::vector<std::string> streamed_tiles() {
  std::vector<std::string> tiles;
  for (const std::string& t : cuda::mma_gemm_tile_names())
    if (t.rfind("ws", 0) == 0) tiles.push_back(t);
  return tiles;
}

#define CAIRN_NEED_WGMMA()                                                    \
  do {                                                                        \
    CAIRN_NEED_GPU();                                                         \
    if (!cuda::wgmma_gemm_on()) GTEST_SKIP() << "no wgmma tiles on this GPU"; \
  } while (0)

TEST(CudaMatmulJoin, JoinedPartsGiveTheTwoLaunchesBits) {
  CAIRN_NEED_WGMMA();
  InvariantScope invariant(true);
  SplitScope split(512);
  std::mt19937 rng(41);
  const int64_t joined_before = cuda::gemm_joined_launches();
  for (auto [n, m, k] : {std::tuple<int64_t, int64_t, int64_t>{17, 1000, 4096},
                         {64, 4096, 14336},
                         {128, 300, 1040},
                         {100, 4096, 4096}}) {
    const Tensor x = to_device(random_host({n, k}, DType::kF32, rng));
    const Tensor w = to_device(random_host({m, k}, DType::kBF16, rng, 0.05f));
    const Tensor b = to_device(random_host({m}, DType::kF32, rng));
    for (const Tensor* bias : {static_cast<const Tensor*>(nullptr), &b})
      for (const std::string& tile : streamed_tiles()) {
        Tensor apart;
        {
          JoinScope two_launches(false);
          apart = product(x, w, bias, tile);
        }
        for (int round = 0; round < 3; ++round)  // the counters must be back at zero
          EXPECT_TRUE(same_bits(product(x, w, bias, tile), apart))
              << tile << " round " << round << " at n " << n << ", w [" << m << ", " << k << "]"
              << (bias ? ", bias" : "");
      }
  }
  EXPECT_GT(cuda::gemm_joined_launches(), joined_before) << "no product ran joined";
}

TEST(CudaMatmulJoin, AGraphReplaysTheJoin) {
  CAIRN_NEED_WGMMA();
  InvariantScope invariant(true);
  SplitScope split(512);
  std::mt19937 rng(42);
  const Tensor x = to_device(random_host({96, 4096}, DType::kF32, rng));
  const Tensor w = to_device(random_host({4096, 4096}, DType::kBF16, rng, 0.05f));
  const Tensor b = to_device(random_host({4096}, DType::kF32, rng));
  const std::string tile = cuda::mma_gemm_tile_name(96, 4096, 4096);
  ASSERT_EQ(0u, tile.rfind("ws", 0)) << tile;
  const Tensor eager = product(x, w, &b, "");  // makes the counters before the capture
  DeviceBackend& dev = device_backend(DeviceKind::kCuda);
  const Tensor poison = poisoned_device({96, 4096}, DType::kF32);
  Tensor y = poisoned_device({96, 4096}, DType::kF32);
  const int64_t joined_before = cuda::gemm_joined_launches();
  dev.begin_capture(0);
  ops::matmul(x, w, &b, y);
  const GraphId g = dev.end_capture(0);
  EXPECT_GT(cuda::gemm_joined_launches(), joined_before) << "the graph holds two launches";
  for (int round = 0; round < 3; ++round) {
    dev.copy(poison, y);
    dev.replay(g, 0);
    EXPECT_TRUE(same_bits(to_host(y), eager)) << "replay " << round;
  }
  dev.release(g);
}

// Two threads, each on a context of its own on GPU 0, run joined products at once, round after
// round: each gets what the test's thread got alone.
TEST(CudaMatmulJoin, TwoContextsJoinAtOnce) {
  CAIRN_NEED_WGMMA();
  InvariantScope invariant(true);
  SplitScope split(512);
  std::mt19937 rng(43);
  const Tensor xh = random_host({64, 4096}, DType::kF32, rng);
  const Tensor wh = random_host({4096, 4096}, DType::kBF16, rng, 0.05f);
  const Tensor alone = product(to_device(xh), to_device(wh), nullptr, "");
  std::vector<int> mismatches(2, 0);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      cuda::bind_thread_device(0);
      const Tensor x = to_device(xh), w = to_device(wh);
      for (int round = 0; round < 20; ++round)
        mismatches[r] += !same_bits(product(x, w, nullptr, ""), alone);
    });
  for (std::thread& t : ranks) t.join();
  EXPECT_EQ(mismatches, std::vector<int>(2, 0));
}

}  // namespace
}  // namespace cairn::gpu_test
