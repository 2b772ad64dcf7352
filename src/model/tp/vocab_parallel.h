// The vocabulary-parallel ends of the model: each rank holds rows
// plan.ranks[r].vocab of the embedding and the LM head.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/communicator.h"
#include "model/tp/shard_plan.h"

namespace cairn::tp {

// t (host or device, contiguous) set to zeros.
void fill_zeros(Tensor& t);

// x [n_tokens, hidden] f32 = the embedding rows of ids [n_tokens], on every
// rank: each rank looks up the ids of its shard in embed_shard [vocab_r, hidden]
// (zeros for the others) and the all-reduce adds the ranks' rows, which is
// exact (one non-zero term per element). Error(kInvalidArgument) for an id
// outside the whole vocabulary.
void vocab_parallel_embedding(const Tensor& embed_shard, const ShardPlan& plan,
                              std::span<const int32_t> ids, Communicator& comm, Tensor& x);

// The logits of x [n_rows, hidden] f32 over the whole vocabulary: each rank
// multiplies by lm_head_shard [vocab_r, hidden], applies the softcap (if > 0)
// and the all-gather brings every shard, padded to plan.vocab_pad columns, to
// every rank. A rank given `logits` [n_rows, vocab] f32 (host or x's device)
// writes them; the others pass nullptr.
void vocab_parallel_logits(const Tensor& x, const Tensor& lm_head_shard, const ShardPlan& plan,
                           float softcap, Communicator& comm, Tensor* logits);

}  // namespace cairn::tp
