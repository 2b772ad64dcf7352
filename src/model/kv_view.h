// The seam between a model family and the KV state. A family's forward never
// touches cache memory: for each attention layer it hands this batch's new
// keys and values to the view, which stores them and computes attention over
// each sequence's whole context. The contiguous cache (kv/contiguous_cache.h) and the
// paged KV state (src/kv/) both implement it, so families do not change when
// the cache layout does.
#pragma once

#include "backend/ops.h"
#include "core/tensor.h"
#include "model/forward_batch.h"

namespace cairn {

class KvView {
 public:
  virtual ~KvView() = default;

  // Appends k, v [n_tokens, n_kv_heads, head_dim] (f32) of layer il for every
  // span of `batch`, then writes the attention of q [n_tokens, n_heads, head_dim]
  // over each span's sequence (cached positions and the new ones, causally) into
  // out [n_tokens, n_heads, head_dim]. p.window > 0 for a sliding-window layer.
  virtual void append_and_attend(int il, const ForwardBatch& batch, const Tensor& q,
                                 const Tensor& k, const Tensor& v, const ops::AttentionParams& p,
                                 Tensor& out) = 0;
};

}  // namespace cairn
