// A rank's slices of a decoder's weights (docs/tensor-parallel.md). Column-
// parallel matrices (q/k/v, gate/up) and the vocabulary-parallel embedding and
// LM head are row ranges of the stored tensors: views, no copy. Row-parallel
// matrices (o_proj, down) are column ranges, copied once at load into
// contiguous tensors in their stored dtype. Norms are replicated (shared views).
#pragma once

#include <cstdint>

#include "model/decoder.h"
#include "model/tp/shard_plan.h"

namespace cairn::tp {

// Rank shard s of w, for heads of head_dim values:
//   wq [hq * head_dim, hidden], wk / wv [hkv * head_dim, hidden] (+ their biases),
//   wo [hidden, hq * head_dim], gate / up [f_r, hidden], down [hidden, f_r],
//   embed and lm_head [vocab_r, hidden] (one tensor when tied).
// The weights must be on the host in f32, bf16 or f16 (Error(kUnsupported) otherwise).
DecoderWeights shard_weights(const DecoderWeights& w, int64_t head_dim, const RankShard& s);

// Columns [begin, end) of m [rows, cols] as a new contiguous [rows, end - begin]
// tensor in m's dtype. m on the host.
Tensor copy_columns(const Tensor& m, int64_t begin, int64_t end);

}  // namespace cairn::tp
