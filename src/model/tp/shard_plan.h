// How a decoder splits across N tensor-parallel ranks (docs/tensor-parallel.md):
// rank r holds a contiguous block of query heads, the KV heads those queries
// read, a block of the MLP's intermediate rows and a block of the vocabulary.
// Query heads and intermediate rows divide evenly; the vocabulary need not (the
// first vocab % N ranks hold one row more). KV heads divide evenly, or, when N
// is a multiple of n_kv_heads, each KV head is replicated on N / n_kv_heads
// ranks (every rank still reads only the KV heads of its own query heads).
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"

namespace cairn::tp {

// A half-open range [begin, end) of rows (heads, intermediate rows, token ids).
struct RowRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const RowRange&) const = default;
};

struct RankShard {
  RowRange q_heads;       // query heads of this rank
  RowRange kv_heads;      // KV heads its query heads read (shared with other ranks when replicated)
  RowRange intermediate;  // rows of gate/up, columns of down
  RowRange vocab;         // rows of the embedding and LM head
};

struct ShardPlan {
  int n_ranks = 1;
  int64_t kv_replicas = 1;  // ranks holding each KV head (1: KV heads are split)
  int64_t vocab_pad = 0;    // the largest vocab shard: every rank's LM-head rows are padded to it
  std::vector<RankShard> ranks;  // [n_ranks]
};

// Error(kInvalidArgument) naming the model's head counts, intermediate size and
// the valid sizes when n_ranks does not fit the model (see valid_tensor_parallel_sizes).
ShardPlan make_shard_plan(const ModelConfig& c, int n_ranks);

// The sizes N ≥ 1 with N dividing n_heads and intermediate_size and either
// dividing n_kv_heads or a multiple of it, in increasing order.
std::vector<int> valid_tensor_parallel_sizes(const ModelConfig& c);

// Rank r's view of the model: its head counts, intermediate rows and vocab shard
// in place of the whole model's (the shape its KV state and weights have).
ModelConfig rank_config(const ModelConfig& c, const ShardPlan& plan, int rank);

}  // namespace cairn::tp
