// The decoder-only transformer every supported family runs: weights in their
// stored dtype (norms and biases as f32), and the family's quirks as a typed
// options struct (DESIGN.md decision 10). Families differ in how they fill these
// at load (families/*.cpp), not in branches through the forward.
#pragma once

#include <memory>
#include <vector>

#include "model/config.h"
#include "model/model.h"
#include "model/rope.h"
#include "model/step_graphs.h"

namespace cairn {

struct AttentionWeights {
  Tensor wq;              // [n_heads * head_dim, hidden]
  Tensor wk;              // [n_kv_heads * head_dim, hidden]
  Tensor wv;              // [n_kv_heads * head_dim, hidden]
  Tensor wo;              // [hidden, n_heads * head_dim]
  Tensor bq, bk, bv;      // f32 [rows of wq / wk / wv], or undefined (no bias)
  Tensor q_norm, k_norm;  // f32 [head_dim] per-head RMSNorm weights, or undefined
  // wq, wk, wv stacked by rows (and bq, bk, bv when all are defined), wq/wk/wv
  // then views of its rows: one product instead of three (fused_projections.h).
  Tensor wqkv, bqkv;  // or undefined
};

struct MlpWeights {
  Tensor gate;     // [intermediate, hidden]
  Tensor up;       // [intermediate, hidden]
  Tensor down;     // [hidden, intermediate]
  Tensor gate_up;  // gate and up stacked by rows (they then view it), or undefined
};

struct LayerWeights {
  Tensor attn_norm;       // f32 [hidden], before attention
  Tensor post_attn_norm;  // f32 [hidden], on attention's output (sandwich), or undefined
  Tensor ffn_norm;        // f32 [hidden], before the MLP
  Tensor post_ffn_norm;   // f32 [hidden], on the MLP's output (sandwich), or undefined
  AttentionWeights attn;
  MlpWeights mlp;
};

struct DecoderWeights {
  Tensor embed;  // [vocab, hidden]
  std::vector<LayerWeights> layers;
  Tensor final_norm;  // f32 [hidden]
  Tensor lm_head;     // [vocab, hidden]; the same tensor as embed when tied
};

// What remains of a family's quirks once its weights are folded.
struct DecoderOptions {
  float embed_scale = 1.0f;     // multiplies the embedding rows (Gemma: sqrt(hidden))
  bool sandwich_norms = false;  // norms on attention and MLP outputs too (Gemma 2/3)
  ops::Activation activation = ops::Activation::kSilu;
  float attn_scale = 1.0f;  // head_dim^-1/2, or query_pre_attn_scalar^-1/2
  float attn_softcap = 0.0f;
  float final_softcap = 0.0f;
  std::vector<RopeTable> ropes;  // distinct rope tables
  std::vector<int> layer_rope;   // [n_layers] index into ropes
};

// Options every family starts from: scale, softcaps, activation and rope tables
// (global for full layers, local for sliding ones) from the config.
DecoderOptions default_decoder_options(const ModelConfig& c);

class DecoderModel final : public Model {
 public:
  DecoderModel(ModelConfig config, DecoderWeights weights, DecoderOptions options);
  ~DecoderModel() override;
  const ModelConfig& config() const override { return config_; }
  void forward(const ForwardBatch& batch, KvView& kv, Tensor& logits) override;
  Device device() const override { return weights_.embed.device(); }
  void to_device(Device device) override;

  const DecoderWeights& weights() const { return weights_; }
  const DecoderOptions& options() const { return options_; }

  // Decode steps of up to max_batch sequences run through captured graphs
  // (model/step_graphs.h) on a device that has them; 0: every step eagerly.
  void set_step_graphs(int64_t max_batch) override;
  // Graphs captured so far.
  size_t n_step_graphs() const;

 private:
  struct Step;   // one step's buffers and inputs
  struct Arena;  // the graphs' buffers, for their largest batch
  DType normed_dtype() const;
  Step eager_step(const ForwardBatch& batch) const;
  Step graph_step(const ForwardBatch& batch, int64_t bucket);
  // Segment s of a step (step_graphs.h): embedding or layer s-1's output and MLP, then
  // layer s's q/k/v.
  void segment(int s, Step& step) const;
  void layer_out(int il, Step& step) const;

  // The final norm, LM head and softcap over the rows of x that want logits.
  void logits_of(const Tensor& x, const std::vector<int64_t>& rows, Tensor& logits) const;

  ModelConfig config_;
  DecoderWeights weights_;
  DecoderOptions options_;
  int64_t graph_max_batch_ = kDefaultGraphBatch;
  std::unique_ptr<StepGraphs> graphs_;  // made at the first step on a device with graphs
  std::unique_ptr<Arena> arena_;
};

}  // namespace cairn
