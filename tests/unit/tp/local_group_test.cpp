// The in-process communicator: the all-reduce sums in rank order whatever the
// arrival order (bitwise reproducible, the same bits on every rank), the
// all-gather places each rank's values at its offset, mismatched sizes fail on
// every rank, and abort wakes ranks blocked in a collective.
#include "backend/cpu/local_group.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "core/error.h"
#include "rank_threads_util.h"

namespace cairn::tp {
namespace {

using test::run_ranks;

// Values whose sum depends on the order of addition: large terms that cancel
// beside small ones, so a rank-order sum and another order differ.
std::vector<std::vector<float>> partials(int n_ranks, int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> small(-1.0f, 1.0f);
  std::vector<std::vector<float>> p(static_cast<size_t>(n_ranks));
  for (int r = 0; r < n_ranks; ++r)
    for (int64_t i = 0; i < count; ++i)
      p[static_cast<size_t>(r)].push_back(small(rng) * (r % 2 == 0 ? 1e7f : 1.0f));
  return p;
}

std::vector<float> sum_in_order(const std::vector<std::vector<float>>& p, bool reverse) {
  std::vector<float> out(p[0].size());
  for (size_t i = 0; i < out.size(); ++i) {
    float s = reverse ? p.back()[i] : p[0][i];
    for (size_t k = 1; k < p.size(); ++k) s += reverse ? p[p.size() - 1 - k][i] : p[k][i];
    out[i] = s;
  }
  return out;
}

// Each rank all-reduces its partials after a random delay; returns every rank's result.
std::vector<std::vector<float>> all_reduce(LocalGroup& g, std::vector<std::vector<float>> p,
                                           uint32_t delay_seed) {
  run_ranks(g, [&](int r) {
    std::mt19937 rng(delay_seed + static_cast<uint32_t>(r));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
    std::vector<float>& v = p[static_cast<size_t>(r)];
    Tensor x = Tensor::empty({static_cast<int64_t>(v.size())}, DType::kF32);
    std::copy(v.begin(), v.end(), x.data<float>());
    g.rank(r).all_reduce_sum(x);
    v.assign(x.data<float>(), x.data<float>() + x.numel());
  });
  return p;
}

TEST(LocalGroup, AllReduceSumsInRankOrderWhateverTheArrival) {
  for (int n : {1, 2, 3, 4}) {
    LocalGroup g(n);
    auto p = partials(n, 1001, 5);
    std::vector<float> want = sum_in_order(p, false);
    if (n > 2) {
      EXPECT_NE(want, sum_in_order(p, true)) << "the data must tell orders apart";
    }
    for (uint32_t trial = 0; trial < 5; ++trial) {
      auto got = all_reduce(g, p, trial * 17);
      for (int r = 0; r < n; ++r)
        ASSERT_EQ(got[static_cast<size_t>(r)], want) << n << " ranks, rank " << r;
    }
  }
}

TEST(LocalGroup, AllReduceOfFewerElementsThanRanks) {
  LocalGroup g(4);
  auto p = partials(4, 3, 9);
  auto got = all_reduce(g, p, 1);
  for (const auto& v : got) EXPECT_EQ(v, sum_in_order(p, false));
}

TEST(LocalGroup, AllGatherPlacesEachRankAtItsOffset) {
  const int n = 3;
  const int64_t count = 5;
  LocalGroup g(n);
  std::vector<std::vector<float>> got(n);
  run_ranks(g, [&](int r) {
    Tensor send = Tensor::empty({count}, DType::kF32);
    for (int64_t i = 0; i < count; ++i) send.data<float>()[i] = static_cast<float>(100 * r + i);
    Tensor recv = Tensor::empty({n * count}, DType::kF32);
    g.rank(r).all_gather(send, recv);
    got[static_cast<size_t>(r)].assign(recv.data<float>(), recv.data<float>() + recv.numel());
  });
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < n; ++k)
      for (int64_t i = 0; i < count; ++i)
        EXPECT_EQ(got[static_cast<size_t>(r)][static_cast<size_t>(k * count + i)], 100 * k + i);
}

TEST(LocalGroup, MismatchedCountsFailOnEveryRank) {
  LocalGroup g(2);
  EXPECT_THROW(run_ranks(g,
                         [&](int r) {
                           Tensor x = Tensor::zeros({4 + r}, DType::kF32);
                           g.rank(r).all_reduce_sum(x);
                         }),
               Error);
  // The group still works afterwards.
  auto p = partials(2, 8, 3);
  EXPECT_EQ(all_reduce(g, p, 0)[1], sum_in_order(p, false));
}

TEST(LocalGroup, AbortWakesRanksWaitingInACollective) {
  LocalGroup g(3);
  try {
    run_ranks(g, [&](int r) {
      if (r == 1) fail(ErrorCode::kOutOfMemory, "rank 1 ran out of pages");
      Tensor x = Tensor::zeros({8}, DType::kF32);
      g.rank(r).all_reduce_sum(x);
    });
    FAIL() << "expected the rank's error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory) << e.what();
  }
  auto p = partials(3, 16, 4);
  EXPECT_EQ(all_reduce(g, p, 2)[2], sum_in_order(p, false)) << "usable after reset";
}

TEST(LocalGroup, RejectsNonF32AndBadSizes) {
  EXPECT_THROW(LocalGroup(0), Error);
  LocalGroup g(1);
  Tensor b = Tensor::zeros({4}, DType::kBF16);
  EXPECT_THROW(g.rank(0).all_reduce_sum(b), Error);
  Tensor send = Tensor::zeros({4}, DType::kF32), recv = Tensor::zeros({5}, DType::kF32);
  EXPECT_THROW(g.rank(0).all_gather(send, recv), Error);
}

}  // namespace
}  // namespace cairn::tp
