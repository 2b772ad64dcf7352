// The shared blocks of a decoder layer: attention (projections, per-head norms,
// rope, the KV seam, output projection) and the gated MLP. Activations are f32
// [n_tokens, ...]. The tensors a layer writes between its input and its output
// live in a LayerScratch: allocated per call, or rows of buffers that outlive
// the call (the decode graphs' arena, model/step_graphs.h), so that the same
// launches can be captured once and replayed.
#pragma once

#include <span>
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

// A layer's intermediate tensors over n rows, f32 unless said.
struct LayerScratch {
  Tensor qkv;       // [n, q + k + v widths] when the projections are fused, else undefined
  Tensor q, k, v;   // [n, width]: views of qkv's one row at n = 1, else their own
  Tensor att;       // [n, q width]: attention's output, of the o product's input dtype
                    // (ops::matmul_input_dtype: written rounded where that is not f32)
  Tensor gate_up;   // [n, 2 · intermediate] when fused, else undefined
  Tensor gate, up;  // [n, intermediate]: views of gate_up's one row at n = 1, else their own
  Tensor act;       // [n, intermediate] of the down product's input dtype when that is not f32
                    // (ops::matmul_input_dtype): the activation written rounded; else undefined
};

// Scratch for n rows of a layer shaped like w, on `device`.
LayerScratch layer_scratch(const LayerWeights& w, Device device, int64_t n);
// Views of the first n rows of s (made for at least n rows).
LayerScratch first_rows(const LayerScratch& s, int64_t n);

// t.q, t.k, t.v for x [n, hidden]: projected, per-head normed, rotated at `positions`.
void attention_in(const AttentionWeights& w, const AttentionShape& shape,
                  const ops::RopeParams& rope, std::span<const int32_t> positions, const Tensor& x,
                  LayerScratch& t);
// Appends the first batch.n_tokens() rows of t.k, t.v for layer il through `kv` and
// writes the attention of t.q's over each span's sequence into t.att's.
void attend(const AttentionShape& shape, const ops::AttentionParams& params, int il,
            const ForwardBatch& batch, KvView& kv, LayerScratch& t);

// out [n_tokens, hidden] = o_proj(attention of x [n_tokens, hidden]) for layer il,
// with scratch allocated here. Appends the layer's K/V for every span of `batch`.
void attention_block(const AttentionWeights& w, const AttentionShape& shape,
                     const ops::RopeParams& rope, const ops::AttentionParams& params, int il,
                     const ForwardBatch& batch, KvView& kv, const Tensor& x, Tensor& out);

// out [n_tokens, hidden] = down(act(gate x) * up x), through t.
void gated_mlp(const MlpWeights& w, ops::Activation act, const Tensor& x, LayerScratch& t,
               Tensor& out);
// The same with scratch allocated here.
void gated_mlp(const MlpWeights& w, ops::Activation act, const Tensor& x, Tensor& out);

// Rows `rows` of x [n, d] copied into a new [rows.size(), d] f32 tensor on x's device
// (the rows whose logits a step computes).
Tensor gather_rows(const Tensor& x, const std::vector<int64_t>& rows);

}  // namespace cairn
