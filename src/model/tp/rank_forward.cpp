#include "model/tp/rank_forward.h"

#include "backend/device.h"
#include "model/blocks.h"
#include "model/tp/vocab_parallel.h"

namespace cairn::tp {

void rank_forward(const RankModel& m, const DecoderOptions& o, const ShardPlan& plan,
                  const ForwardBatch& batch, KvView& kv, Communicator& comm, Tensor* logits) {
  const ModelConfig& c = m.config;
  const DecoderWeights& w = m.weights;
  const int64_t n = batch.n_tokens();
  const float eps = static_cast<float>(c.norm_eps);
  AttentionShape shape{c.n_heads, c.n_kv_heads, c.head_dim, eps};  // the rank's heads

  const Device dev = w.embed.device();
  Tensor x = empty_on(dev, {n, c.hidden_size}, DType::kF32);  // the residual stream, whole
  vocab_parallel_embedding(w.embed, plan, batch.tokens, comm, x);
  if (o.embed_scale != 1.0f) ops::scale(x, o.embed_scale);
  Tensor h = empty_on(dev, {n, c.hidden_size}, DType::kF32);
  Tensor y = empty_on(dev, {n, c.hidden_size}, DType::kF32);  // a block's partial, then its sum

  for (int il = 0; il < c.n_layers; ++il) {
    const LayerWeights& lw = w.layers[static_cast<size_t>(il)];
    ops::AttentionParams ap{o.attn_scale, o.attn_softcap, c.layer_window[static_cast<size_t>(il)]};
    const RopeTable& rope = o.ropes[static_cast<size_t>(o.layer_rope[static_cast<size_t>(il)])];

    ops::rms_norm(x, lw.attn_norm, eps, h);
    attention_block(lw.attn, shape, rope.params(), ap, il, batch, kv, h, y);
    comm.all_reduce_sum(y);
    if (o.sandwich_norms) ops::rms_norm(y, lw.post_attn_norm, eps, y);
    ops::add(x, y, x);

    ops::rms_norm(x, lw.ffn_norm, eps, h);
    gated_mlp(lw.mlp, o.activation, h, y);
    comm.all_reduce_sum(y);
    if (o.sandwich_norms) ops::rms_norm(y, lw.post_ffn_norm, eps, y);
    ops::add(x, y, x);
  }

  std::vector<int64_t> rows = batch.logit_rows();
  if (rows.empty()) return;
  Tensor last = gather_rows(x, rows);  // [n_logit_rows, hidden]
  ops::rms_norm(last, w.final_norm, eps, last);
  vocab_parallel_logits(last, w.lm_head, plan, o.final_softcap, comm, logits);
}

}  // namespace cairn::tp
