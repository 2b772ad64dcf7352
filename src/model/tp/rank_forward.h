// One rank's share of a forward step, mirroring DecoderModel::forward's layer
// loop: the same blocks (blocks.h) over the rank's heads and intermediate rows,
// each row-parallel output (o_proj, down) followed by an all-reduce, so that the
// residual stream is whole, and the same bits, on every rank between blocks.
#pragma once

#include "backend/communicator.h"
#include "model/decoder.h"
#include "model/tp/shard_plan.h"

namespace cairn::tp {

struct RankModel {
  ModelConfig config;      // the rank's shapes (rank_config): heads, KV heads, f_r, vocab_r
  DecoderWeights weights;  // the rank's shards (shard_weights)
};

// Runs every layer of `m` over `batch`, appending the rank's K/V heads through
// `kv` (the rank's shard), and, when batch has logit rows, computes them
// vocabulary-parallel; the rank given `logits` [n_logit_rows, vocab] writes them.
// Every rank of the group must call it with the same batch.
void rank_forward(const RankModel& m, const DecoderOptions& o, const ShardPlan& plan,
                  const ForwardBatch& batch, KvView& kv, Communicator& comm, Tensor* logits);

}  // namespace cairn::tp
