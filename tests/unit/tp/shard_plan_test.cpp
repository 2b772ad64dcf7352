// The shard plan: head, KV-head, intermediate and vocabulary splits per rank,
// KV heads replicated when the size is a multiple of them, and the errors that
// name the model's head counts and the valid sizes.
#include "model/tp/shard_plan.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace cairn::tp {
namespace {

ModelConfig config(int64_t heads, int64_t kv_heads, int64_t intermediate, int64_t vocab) {
  ModelConfig c;
  c.path = "tiny";
  c.n_heads = heads;
  c.n_kv_heads = kv_heads;
  c.head_dim = 8;
  c.hidden_size = heads * 8;
  c.intermediate_size = intermediate;
  c.vocab_size = vocab;
  return c;
}

std::string error_of(const ModelConfig& c, int n) {
  try {
    make_shard_plan(c, n);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "";
}

TEST(ShardPlan, SplitsHeadsKvHeadsIntermediateAndVocab) {
  ShardPlan p = make_shard_plan(config(8, 4, 172, 512), 2);  // stories260K's shape
  ASSERT_EQ(p.ranks.size(), 2u);
  EXPECT_EQ(p.kv_replicas, 1);
  EXPECT_EQ(p.ranks[0].q_heads, (RowRange{0, 4}));
  EXPECT_EQ(p.ranks[1].q_heads, (RowRange{4, 8}));
  EXPECT_EQ(p.ranks[0].kv_heads, (RowRange{0, 2}));
  EXPECT_EQ(p.ranks[1].kv_heads, (RowRange{2, 4}));
  EXPECT_EQ(p.ranks[0].intermediate, (RowRange{0, 86}));
  EXPECT_EQ(p.ranks[1].intermediate, (RowRange{86, 172}));
  EXPECT_EQ(p.ranks[0].vocab, (RowRange{0, 256}));
  EXPECT_EQ(p.ranks[1].vocab, (RowRange{256, 512}));
  EXPECT_EQ(p.vocab_pad, 256);
}

TEST(ShardPlan, OneRankHoldsEverything) {
  ShardPlan p = make_shard_plan(config(4, 1, 96, 37), 1);
  ASSERT_EQ(p.ranks.size(), 1u);
  EXPECT_EQ(p.ranks[0].q_heads, (RowRange{0, 4}));
  EXPECT_EQ(p.ranks[0].kv_heads, (RowRange{0, 1}));
  EXPECT_EQ(p.ranks[0].vocab, (RowRange{0, 37}));
}

TEST(ShardPlan, VocabRemainderGoesToTheFirstRanks) {
  ShardPlan p = make_shard_plan(config(4, 4, 128, 259), 4);
  int64_t next = 0;
  std::vector<int64_t> sizes;
  for (const RankShard& s : p.ranks) {
    EXPECT_EQ(s.vocab.begin, next);
    next = s.vocab.end;
    sizes.push_back(s.vocab.size());
  }
  EXPECT_EQ(next, 259);
  EXPECT_EQ(sizes, (std::vector<int64_t>{65, 65, 65, 64}));
  EXPECT_EQ(p.vocab_pad, 65);
}

TEST(ShardPlan, KvHeadsReplicateWhenTheSizeIsAMultipleOfThem) {
  ShardPlan p = make_shard_plan(config(4, 2, 128, 256), 4);
  EXPECT_EQ(p.kv_replicas, 2);
  std::vector<RowRange> kv;
  for (const RankShard& s : p.ranks) kv.push_back(s.kv_heads);
  EXPECT_EQ(kv, (std::vector<RowRange>{{0, 1}, {0, 1}, {1, 2}, {1, 2}}));
  ShardPlan one = make_shard_plan(config(4, 1, 128, 256), 2);  // qwen2's fixture: 1 KV head
  EXPECT_EQ(one.ranks[0].kv_heads, (RowRange{0, 1}));
  EXPECT_EQ(one.ranks[1].kv_heads, (RowRange{0, 1}));
}

// GQA reads query head h against KV head h / (n_heads / n_kv_heads): on every
// rank, each of its query heads must find that KV head among its own.
TEST(ShardPlan, EveryRanksQueryHeadsReadOnlyItsKvHeads) {
  for (int64_t heads : {1, 2, 4, 6, 8, 12, 16, 32})
    for (int64_t kv = 1; kv <= heads; ++kv) {
      if (heads % kv != 0) continue;
      ModelConfig c = config(heads, kv, 96, 100);
      for (int n : valid_tensor_parallel_sizes(c)) {
        ShardPlan p = make_shard_plan(c, n);
        for (const RankShard& s : p.ranks) {
          ModelConfig rc = rank_config(c, p, static_cast<int>(&s - p.ranks.data()));
          EXPECT_EQ(rc.n_heads % rc.n_kv_heads, 0);
          for (int64_t h = s.q_heads.begin; h < s.q_heads.end; ++h) {
            int64_t want = h / (heads / kv);
            int64_t local_q = h - s.q_heads.begin;
            int64_t local_kv = local_q / (rc.n_heads / rc.n_kv_heads);  // what the rank reads
            EXPECT_EQ(s.kv_heads.begin + local_kv, want)
                << heads << " heads, " << kv << " KV heads, size " << n << ", head " << h;
          }
        }
      }
    }
}

TEST(ShardPlan, ValidSizes) {
  EXPECT_EQ(valid_tensor_parallel_sizes(config(8, 4, 172, 512)), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(valid_tensor_parallel_sizes(config(4, 2, 96, 256)), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(valid_tensor_parallel_sizes(config(6, 3, 96, 256)), (std::vector<int>{1, 3, 6}));
  EXPECT_EQ(valid_tensor_parallel_sizes(config(8, 4, 100, 512)), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(valid_tensor_parallel_sizes(config(8, 4, 86, 512)), (std::vector<int>{1, 2}));
}

TEST(ShardPlan, ErrorsNameHeadCountsAndValidSizes) {
  std::string e = error_of(config(4, 2, 128, 256), 3);
  EXPECT_NE(e.find("tensor parallel 3"), std::string::npos) << e;
  EXPECT_NE(e.find("4 attention heads, 2 KV heads"), std::string::npos) << e;
  EXPECT_NE(e.find("valid sizes: 1, 2, 4"), std::string::npos) << e;

  e = error_of(config(6, 3, 96, 256), 2);  // divides the heads, not the KV heads
  EXPECT_NE(e.find("6 attention heads, 3 KV heads"), std::string::npos) << e;
  EXPECT_NE(e.find("valid sizes: 1, 3, 6"), std::string::npos) << e;

  e = error_of(config(8, 4, 86, 512), 4);  // the intermediate size does not divide
  EXPECT_NE(e.find("intermediate size 86"), std::string::npos) << e;
  EXPECT_NE(e.find("valid sizes: 1, 2"), std::string::npos) << e;

  EXPECT_NE(error_of(config(4, 2, 128, 256), 0), "");
  EXPECT_NE(error_of(config(4, 2, 128, 256), 8), "");
  EXPECT_NE(error_of(config(4, 4, 128, 2), 4), "");  // fewer vocabulary rows than ranks
}

TEST(ShardPlan, RankConfigCarriesTheRanksShapes) {
  ModelConfig c = config(8, 4, 172, 513);
  ShardPlan p = make_shard_plan(c, 2);
  ModelConfig r1 = rank_config(c, p, 1);
  EXPECT_EQ(r1.n_heads, 4);
  EXPECT_EQ(r1.n_kv_heads, 2);
  EXPECT_EQ(r1.intermediate_size, 86);
  EXPECT_EQ(r1.vocab_size, 256);
  EXPECT_EQ(r1.hidden_size, c.hidden_size);
  EXPECT_EQ(rank_config(c, p, 0).vocab_size, 257);
}

}  // namespace
}  // namespace cairn::tp
