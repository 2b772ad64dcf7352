#include "model/decoder.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "model/blocks.h"

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

// Copies rows `rows` of x [n, d] into a new [rows.size(), d] tensor.
Tensor gather_rows(const Tensor& x, const std::vector<int64_t>& rows) {
  int64_t d = x.dim(1);
  Tensor y = Tensor::empty({static_cast<int64_t>(rows.size()), d}, DType::kF32);
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(y.data<float>() + static_cast<int64_t>(i) * d, x.data<float>() + rows[i] * d,
                static_cast<size_t>(d) * sizeof(float));
  return y;
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
    : config_(std::move(config)), weights_(std::move(weights)), options_(std::move(options)) {}

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

  Tensor x = Tensor::empty({n, c.hidden_size}, DType::kF32);  // the residual stream
  ops::embedding(weights_.embed, batch.tokens, x);
  if (o.embed_scale != 1.0f) ops::scale(x, o.embed_scale);
  Tensor h = Tensor::empty({n, c.hidden_size}, DType::kF32);
  Tensor y = Tensor::empty({n, c.hidden_size}, DType::kF32);

  for (int il = 0; il < c.n_layers; ++il) {
    const LayerWeights& lw = weights_.layers[static_cast<size_t>(il)];
    ops::AttentionParams ap{o.attn_scale, o.attn_softcap, c.layer_window[static_cast<size_t>(il)]};
    const RopeTable& rope = o.ropes[static_cast<size_t>(o.layer_rope[static_cast<size_t>(il)])];

    ops::rms_norm(x, lw.attn_norm, eps, h);
    attention_block(lw.attn, shape, rope.params(), ap, il, batch, kv, h, y);
    if (o.sandwich_norms) ops::rms_norm(y, lw.post_attn_norm, eps, y);
    ops::add(x, y, x);

    ops::rms_norm(x, lw.ffn_norm, eps, h);
    gated_mlp(lw.mlp, o.activation, h, y);
    if (o.sandwich_norms) ops::rms_norm(y, lw.post_ffn_norm, eps, y);
    ops::add(x, y, x);
  }

  if (rows.empty()) return;
  Tensor last = gather_rows(x, rows);  // [n_logit_rows, hidden]
  ops::rms_norm(last, weights_.final_norm, eps, last);
  ops::matmul(last, weights_.lm_head, nullptr, logits);
  if (o.final_softcap > 0) ops::softcap(logits, o.final_softcap);
}

}  // namespace cairn
