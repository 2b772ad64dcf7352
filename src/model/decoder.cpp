#include "model/decoder.h"

#include <cmath>
#include <cstring>

#include "backend/device.h"
#include "core/error.h"
#include "model/blocks.h"
#include "model/device_weights.h"
#include "model/fused_projections.h"

namespace cairn {
namespace {

ops::Activation parse_activation(const ModelConfig& c) {
  const std::string& a = c.hidden_act;
  if (a == "silu" || a == "swish") return ops::Activation::kSilu;
  if (a == "gelu_pytorch_tanh" || a == "gelu_tanh" || a == "gelu_new" || a == "gelu_fast")
    return ops::Activation::kGeluTanh;
  fail(ErrorCode::kUnsupported, "{}: hidden_act '{}' is not supported (silu, gelu_pytorch_tanh)",
       c.path, a);
}

}  // namespace

DecoderOptions default_decoder_options(const ModelConfig& c) {
  DecoderOptions o;
  o.activation = parse_activation(c);
  double scalar =
      c.query_pre_attn_scalar > 0 ? c.query_pre_attn_scalar : static_cast<double>(c.head_dim);
  o.attn_scale = static_cast<float>(1.0 / std::sqrt(scalar));
  o.attn_softcap = static_cast<float>(c.attn_logit_softcap);
  o.final_softcap = static_cast<float>(c.final_logit_softcap);
  o.ropes.push_back(make_rope_table(c.rope, c.head_dim, c.max_position_embeddings));
  o.ropes.push_back(make_rope_table(c.rope_local, c.head_dim, c.max_position_embeddings));
  for (RopeTable& t : o.ropes)
    t.layout = c.rope_interleaved ? ops::RopeLayout::kInterleaved : ops::RopeLayout::kHalfSplit;
  for (int il = 0; il < c.n_layers; ++il) o.layer_rope.push_back(c.is_sliding(il) ? 1 : 0);
  return o;
}

DecoderModel::DecoderModel(ModelConfig config, DecoderWeights weights, DecoderOptions options)
    : config_(std::move(config)), weights_(std::move(weights)), options_(std::move(options)) {
  fuse_projections(weights_);  // on a GPU only
}

void DecoderModel::forward(const ForwardBatch& batch, KvView& kv, Tensor& logits) {
  const ModelConfig& c = config_;
  const DecoderOptions& o = options_;
  int64_t n = batch.n_tokens();
  std::vector<int64_t> rows = batch.logit_rows();
  if (logits.ndim() != 2 || logits.dim(0) != static_cast<int64_t>(rows.size()) ||
      logits.dim(1) != c.vocab_size || logits.dtype() != DType::kF32)
    fail(ErrorCode::kInvalidArgument, "forward: logits is {}, expected f32[{}, {}]",
         logits.describe(), rows.size(), c.vocab_size);
  if (static_cast<int64_t>(batch.positions.size()) != n)
    fail(ErrorCode::kInvalidArgument, "forward: {} positions for {} tokens", batch.positions.size(),
         n);
  if (n == 0) return;
  float eps = static_cast<float>(c.norm_eps);
  AttentionShape shape{c.n_heads, c.n_kv_heads, c.head_dim, eps};

  const Device dev = device();
  Tensor x = empty_on(dev, {n, c.hidden_size}, DType::kF32);  // the residual stream
  ops::embedding(weights_.embed, batch.tokens, x);
  if (o.embed_scale != 1.0f) ops::scale(x, o.embed_scale);
  Tensor h = empty_on(dev, {n, c.hidden_size}, DType::kF32);
  Tensor y = empty_on(dev, {n, c.hidden_size}, DType::kF32);

  // Each residual add runs with the norm after it (add_rms_norm: the same bits as the two).
  if (c.n_layers > 0) ops::rms_norm(x, weights_.layers.front().attn_norm, eps, h);
  for (int il = 0; il < c.n_layers; ++il) {
    const LayerWeights& lw = weights_.layers[static_cast<size_t>(il)];
    ops::AttentionParams ap{o.attn_scale, o.attn_softcap, c.layer_window[static_cast<size_t>(il)]};
    const RopeTable& rope = o.ropes[static_cast<size_t>(o.layer_rope[static_cast<size_t>(il)])];

    attention_block(lw.attn, shape, rope.params(), ap, il, batch, kv, h, y);
    if (o.sandwich_norms) ops::rms_norm(y, lw.post_attn_norm, eps, y);
    ops::add_rms_norm(x, y, lw.ffn_norm, eps, h);

    gated_mlp(lw.mlp, o.activation, h, y);
    if (o.sandwich_norms) ops::rms_norm(y, lw.post_ffn_norm, eps, y);
    if (il + 1 < c.n_layers)
      ops::add_rms_norm(x, y, weights_.layers[static_cast<size_t>(il) + 1].attn_norm, eps, h);
    else
      ops::add(x, y, x);
  }

  if (!rows.empty()) logits_of(x, rows, logits);
}

void DecoderModel::logits_of(const Tensor& x, const std::vector<int64_t>& rows,
                             Tensor& logits) const {
  Tensor last = gather_rows(x, rows);  // [n_logit_rows, hidden]
  ops::rms_norm(last, weights_.final_norm, static_cast<float>(config_.norm_eps), last);
  const bool here = logits.device() == x.device();
  Tensor out = here ? logits : empty_on(x.device(), logits.shape(), DType::kF32);
  ops::matmul(last, weights_.lm_head, nullptr, out);
  if (options_.final_softcap > 0) ops::softcap(out, options_.final_softcap);
  if (here) return;
  DeviceBackend& b = device_backend(x.device().kind);
  b.copy(out, logits);
  b.synchronize();
}

void DecoderModel::to_device(Device device) {
  if (device == this->device()) return;
  weights_ = weights_on(weights_, device);
  fuse_projections(weights_);
}

}  // namespace cairn
