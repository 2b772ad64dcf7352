// The vocabulary-parallel embedding and LM head over simulated ranks against the
// unsharded ops: the embedding bit for bit (one non-zero term per element), the
// logits bit for bit too (each logit is the same dot product, in the same lane
// order, whichever rank computes it), with a vocabulary that leaves a remainder.
#include "model/tp/vocab_parallel.h"
#include "model/blocks.h"

#include <gtest/gtest.h>

#include "backend/cpu/local_group.h"
#include "backend/device.h"
#include "backend/ops.h"
#include "core/error.h"
#include "model/tp/sharded_weights.h"
#include "rank_threads_util.h"
#include "tp_test_util.h"

namespace cairn::tp {
namespace {

using test::run_ranks;
using test::tiny_config;
using test::values;

Tensor random_matrix(int64_t rows, int64_t cols, DType dtype, uint64_t seed) {
  Tensor f = Tensor::empty({rows, cols}, DType::kF32);
  for (int64_t i = 0; i < f.numel(); ++i)
    f.data<float>()[i] = 2.0f * uniform_at(seed, static_cast<uint64_t>(i)) - 1.0f;
  if (dtype == DType::kF32) return f;
  Tensor t = Tensor::empty({rows, cols}, dtype);
  ops::convert(f, t);
  return t;
}

struct Case {
  int n_ranks;
  DType dtype;
};

class VocabParallel : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    c_ = tiny_config(false);
    plan_ = make_shard_plan(c_, GetParam().n_ranks);
    table_ = random_matrix(c_.vocab_size, c_.hidden_size, GetParam().dtype, 11);
  }
  Tensor shard(int r) const {
    const RowRange& v = plan_.ranks[static_cast<size_t>(r)].vocab;
    return table_.slice_rows(v.begin, v.end);
  }
  ModelConfig c_;
  ShardPlan plan_;
  Tensor table_;  // [vocab, hidden]
};

TEST_P(VocabParallel, EmbeddingEqualsUnshardedBitForBit) {
  // Every shard's first and last id, repeats, and ids in any order.
  std::vector<int32_t> ids = {0, 36, 12, 13, 25, 24, 5, 5, 36, 1};
  Tensor want = Tensor::empty({static_cast<int64_t>(ids.size()), c_.hidden_size}, DType::kF32);
  ops::embedding(table_, ids, want);
  LocalGroup g(plan_.n_ranks);
  std::vector<std::vector<float>> got(static_cast<size_t>(plan_.n_ranks));
  run_ranks(g, [&](int r) {
    Tensor x = Tensor::empty(want.shape(), DType::kF32);
    vocab_parallel_embedding(shard(r), plan_, ids, g.rank(r), x);
    got[static_cast<size_t>(r)] = values(x);
  });
  for (const auto& v : got) EXPECT_EQ(v, values(want));
}

TEST_P(VocabParallel, EmbeddingRejectsIdsOutsideTheVocabulary) {
  LocalGroup g(plan_.n_ranks);
  for (int32_t bad : {-1, 37}) {
    std::vector<int32_t> ids = {3, bad};
    EXPECT_THROW(run_ranks(g,
                           [&](int r) {
                             Tensor x = Tensor::empty({2, c_.hidden_size}, DType::kF32);
                             vocab_parallel_embedding(shard(r), plan_, ids, g.rank(r), x);
                           }),
                 Error);
  }
}

TEST_P(VocabParallel, LogitsEqualUnshardedBitForBit) {
  for (float softcap : {0.0f, 3.0f}) {
    Tensor x = random_matrix(3, c_.hidden_size, DType::kF32, 12);
    Tensor want = Tensor::empty({3, c_.vocab_size}, DType::kF32);
    ops::matmul(x, table_, nullptr, want);
    if (softcap > 0) ops::softcap(want, softcap);
    LocalGroup g(plan_.n_ranks);
    std::vector<std::vector<float>> got(static_cast<size_t>(plan_.n_ranks));
    run_ranks(g, [&](int r) {
      Tensor logits = Tensor::empty(want.shape(), DType::kF32);
      vocab_parallel_logits(x, shard(r), plan_, softcap, g.rank(r), &logits);
      got[static_cast<size_t>(r)] = values(logits);
    });
    for (const auto& v : got) EXPECT_EQ(v, values(want)) << "softcap " << softcap;
  }
}

TEST(VocabParallelRows, GatherRows) {
  Tensor x = random_matrix(4, 3, DType::kF32, 1);
  Tensor y = gather_rows(x, {3, 0});
  std::vector<float> want = values(x.slice_rows(3, 4));
  std::vector<float> first = values(x.slice_rows(0, 1));
  want.insert(want.end(), first.begin(), first.end());
  EXPECT_EQ(values(y), want);
}

INSTANTIATE_TEST_SUITE_P(Sizes, VocabParallel,
                         ::testing::Values(Case{1, DType::kF32}, Case{3, DType::kF32},
                                           Case{3, DType::kBF16}, Case{6, DType::kBF16}),
                         [](const auto& info) {
                           return std::to_string(info.param.n_ranks) + "_ranks_" +
                                  std::string(dtype_name(info.param.dtype));
                         });

}  // namespace
}  // namespace cairn::tp
