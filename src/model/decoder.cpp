#include "model/decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>

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

struct DecoderModel::Step {
  Tensor x, h, y;  // [rows, hidden]: the residual stream, a block's normed input (of
                   // normed_dtype()), its output
  LayerScratch t;  // every layer's (they share shapes)
  std::span<const int32_t> tokens, positions;  // [rows]
};

struct DecoderModel::Arena {
  Tensor x, h, y;
  Tensor h_rounded;  // h in normed_dtype() when that is not f32 (made when first needed)
  LayerScratch t;
  std::vector<int32_t> tokens, positions;  // the graphs read them from here at every replay
};

DecoderModel::~DecoderModel() = default;

void DecoderModel::forward(const ForwardBatch& batch, KvView& kv, Tensor& logits) {
  const ModelConfig& c = config_;
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
  if (!graphs_)
    graphs_ = std::make_unique<StepGraphs>(device_backend(device().kind),
                                           c.n_layers > 0 ? graph_max_batch_ : 0);
  const int64_t bucket = graphs_->bucket_for(batch);
  Step step = bucket > 0 ? graph_step(batch, bucket) : eager_step(batch);
  const AttentionShape shape{c.n_heads, c.n_kv_heads, c.head_dim, static_cast<float>(c.norm_eps)};
  auto segment = [&](int s) { this->segment(s, step); };
  auto gap = [&](int il) {
    const ops::AttentionParams ap{options_.attn_scale, options_.attn_softcap,
                                  c.layer_window[static_cast<size_t>(il)]};
    attend(shape, ap, il, batch, kv, step.t);
  };
  graphs_->run(bucket, c.n_layers + 1, segment, gap);
  if (!rows.empty()) logits_of(step.x, rows, logits);
}

// The dtype of a block's normed input h: what its products take at no cost
// (ops::matmul_input_dtype) when every product reading h agrees, else f32.
DType DecoderModel::normed_dtype() const {
  if (weights_.layers.empty()) return DType::kF32;
  const LayerWeights& l = weights_.layers.front();
  const Tensor& first = l.attn.wqkv.defined() ? l.attn.wqkv : l.attn.wq;
  const DType t = ops::matmul_input_dtype(first);
  for (const LayerWeights& lw : weights_.layers)
    for (const Tensor* w : {&lw.attn.wqkv, &lw.attn.wq, &lw.attn.wk, &lw.attn.wv, &lw.mlp.gate_up,
                            &lw.mlp.gate, &lw.mlp.up})
      if (w->defined() && ops::matmul_input_dtype(*w) != t) return DType::kF32;
  return t;
}

DecoderModel::Step DecoderModel::eager_step(const ForwardBatch& batch) const {
  const Device dev = device();
  const int64_t n = batch.n_tokens(), d = config_.hidden_size;
  Step s{empty_on(dev, {n, d}, DType::kF32),
         empty_on(dev, {n, d}, normed_dtype()),
         empty_on(dev, {n, d}, DType::kF32),
         LayerScratch{},
         batch.tokens,
         batch.positions};
  if (!weights_.layers.empty()) s.t = layer_scratch(weights_.layers.front(), dev, n);
  return s;
}

// The arena's first `bucket` rows, its inputs the batch's padded with token 0 at position 0.
DecoderModel::Step DecoderModel::graph_step(const ForwardBatch& batch, int64_t bucket) {
  const int64_t max = graphs_->max_batch();
  if (!arena_) {
    const Device dev = device();
    const int64_t d = config_.hidden_size;
    arena_ = std::make_unique<Arena>(Arena{empty_on(dev, {max, d}, DType::kF32),
                                           empty_on(dev, {max, d}, DType::kF32),
                                           empty_on(dev, {max, d}, DType::kF32), Tensor(),
                                           layer_scratch(weights_.layers.front(), dev, max),
                                           std::vector<int32_t>(static_cast<size_t>(max)),
                                           std::vector<int32_t>(static_cast<size_t>(max))});
  }
  Arena& a = *arena_;
  // Graphs of either batch-invariant mode keep their own h (the modes' graphs differ).
  const DType normed = normed_dtype();
  if (normed != DType::kF32 && !a.h_rounded.defined())
    a.h_rounded = empty_on(device(), {max, config_.hidden_size}, normed);
  const Tensor& h = normed != DType::kF32 ? a.h_rounded : a.h;
  const size_t b = static_cast<size_t>(bucket);
  std::fill(std::copy(batch.tokens.begin(), batch.tokens.end(), a.tokens.begin()),
            a.tokens.begin() + static_cast<std::ptrdiff_t>(b), 0);
  std::fill(std::copy(batch.positions.begin(), batch.positions.end(), a.positions.begin()),
            a.positions.begin() + static_cast<std::ptrdiff_t>(b), 0);
  return Step{a.x.slice_rows(0, bucket),
              h.slice_rows(0, bucket),
              a.y.slice_rows(0, bucket),
              first_rows(a.t, bucket),
              std::span<const int32_t>(a.tokens.data(), b),
              std::span<const int32_t>(a.positions.data(), b)};
}

void DecoderModel::segment(int s, Step& step) const {
  const ModelConfig& c = config_;
  const float eps = static_cast<float>(c.norm_eps);
  if (s == 0) {
    ops::embedding(weights_.embed, step.tokens, step.x);
    if (options_.embed_scale != 1.0f) ops::scale(step.x, options_.embed_scale);
    if (c.n_layers > 0) ops::rms_norm(step.x, weights_.layers.front().attn_norm, eps, step.h);
  } else {
    layer_out(s - 1, step);
  }
  if (s == c.n_layers) return;
  const AttentionShape shape{c.n_heads, c.n_kv_heads, c.head_dim, eps};
  const RopeTable& rope =
      options_.ropes[static_cast<size_t>(options_.layer_rope[static_cast<size_t>(s)])];
  attention_in(weights_.layers[static_cast<size_t>(s)].attn, shape, rope.params(), step.positions,
               step.h, step.t);
}

// o_proj, the MLP, and each residual add with the norm after it (add_rms_norm: the bits of
// the two).
void DecoderModel::layer_out(int il, Step& step) const {
  const float eps = static_cast<float>(config_.norm_eps);
  const LayerWeights& lw = weights_.layers[static_cast<size_t>(il)];
  ops::matmul(step.t.att, lw.attn.wo, nullptr, step.y);
  if (options_.sandwich_norms) ops::rms_norm(step.y, lw.post_attn_norm, eps, step.y);
  ops::add_rms_norm(step.x, step.y, lw.ffn_norm, eps, step.h);
  gated_mlp(lw.mlp, options_.activation, step.h, step.t, step.y);
  if (options_.sandwich_norms) ops::rms_norm(step.y, lw.post_ffn_norm, eps, step.y);
  if (il + 1 < config_.n_layers)
    ops::add_rms_norm(step.x, step.y, weights_.layers[static_cast<size_t>(il) + 1].attn_norm, eps,
                      step.h);
  else
    ops::add(step.x, step.y, step.x);
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
  graphs_.reset(), arena_.reset();  // captured over the old device's buffers
  weights_ = weights_on(weights_, device);
  fuse_projections(weights_);
}

void DecoderModel::set_step_graphs(int64_t max_batch) {
  if (max_batch < 0)
    fail(ErrorCode::kInvalidArgument, "step graphs: max batch {} is negative", max_batch);
  graphs_.reset(), arena_.reset();
  graph_max_batch_ = max_batch;
}

size_t DecoderModel::n_step_graphs() const {
  return graphs_ ? graphs_->n_graphs() : 0;
}

}  // namespace cairn
