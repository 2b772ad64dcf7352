// The shared blocks of a decoder layer: attention (projections, per-head norms,
// rope, the KV seam, output projection) and the gated MLP. Activations are f32
// [n_tokens, ...]; scratch tensors are allocated per call.
#pragma once

#include <vector>

#include "backend/ops.h"
#include "model/decoder.h"
#include "model/forward_batch.h"
#include "model/kv_view.h"

namespace cairn {

struct AttentionShape {
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  float norm_eps = 1e-6f;  // for q_norm / k_norm
};

// out [n_tokens, hidden] = o_proj(attention of x [n_tokens, hidden]) for layer il.
// Appends the layer's K/V for every span of `batch` through `kv`.
void attention_block(const AttentionWeights& w, const AttentionShape& shape,
                     const ops::RopeParams& rope, const ops::AttentionParams& params, int il,
                     const ForwardBatch& batch, KvView& kv, const Tensor& x, Tensor& out);

// out [n_tokens, hidden] = down(act(gate x) * up x).
// Rows `rows` of x [n, d] copied into a new [rows.size(), d] f32 tensor on x's device
// (the rows whose logits a step computes).
Tensor gather_rows(const Tensor& x, const std::vector<int64_t>& rows);

void gated_mlp(const MlpWeights& w, ops::Activation act, const Tensor& x, Tensor& out);

}  // namespace cairn
