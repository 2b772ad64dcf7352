#include "model/hf_weights.h"

#include "core/error.h"

namespace cairn {
namespace {

float element_f32(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kF32:
      return t.data<float>()[i];
    case DType::kBF16:
      return bf16_to_f32(t.data<uint16_t>()[i]);
    case DType::kF16:
      return f16_to_f32(t.data<uint16_t>()[i]);
    default:
      CAIRN_CHECK(false, "float dtype expected, got {}", t.describe());
  }
  return 0.0f;
}

AttentionWeights load_attention(io::WeightStore& ws, const ModelConfig& c, const HfLayout& l,
                                const std::string& p) {
  AttentionWeights a;
  int64_t d = c.hidden_size, q_rows = c.n_heads * c.head_dim, kv_rows = c.n_kv_heads * c.head_dim;
  if (l.fused_qkv) {
    Tensor qkv = ws.get(p + "qkv_proj.weight", {q_rows + 2 * kv_rows, d});
    a.wq = qkv.slice_rows(0, q_rows);
    a.wk = qkv.slice_rows(q_rows, q_rows + kv_rows);
    a.wv = qkv.slice_rows(q_rows + kv_rows, q_rows + 2 * kv_rows);
  } else {
    a.wq = ws.get(p + "q_proj.weight", {q_rows, d});
    a.wk = ws.get(p + "k_proj.weight", {kv_rows, d});
    a.wv = ws.get(p + "v_proj.weight", {kv_rows, d});
  }
  a.wo = ws.get(p + "o_proj.weight", {d, q_rows});
  if (l.qkv_bias) {
    a.bq = load_f32_vector(ws, p + "q_proj.bias", q_rows, 0.0f);
    a.bk = load_f32_vector(ws, p + "k_proj.bias", kv_rows, 0.0f);
    a.bv = load_f32_vector(ws, p + "v_proj.bias", kv_rows, 0.0f);
  }
  if (l.qk_norm) {
    float add = l.norm_plus_one ? 1.0f : 0.0f;
    a.q_norm = load_f32_vector(ws, p + "q_norm.weight", c.head_dim, add);
    a.k_norm = load_f32_vector(ws, p + "k_norm.weight", c.head_dim, add);
  }
  return a;
}

MlpWeights load_mlp(io::WeightStore& ws, const ModelConfig& c, const HfLayout& l,
                    const std::string& p) {
  MlpWeights m;
  int64_t d = c.hidden_size, f = c.intermediate_size;
  if (l.fused_gate_up) {
    Tensor gu = ws.get(p + "gate_up_proj.weight", {2 * f, d});
    m.gate = gu.slice_rows(0, f);
    m.up = gu.slice_rows(f, 2 * f);
  } else {
    m.gate = ws.get(p + "gate_proj.weight", {f, d});
    m.up = ws.get(p + "up_proj.weight", {f, d});
  }
  m.down = ws.get(p + "down_proj.weight", {d, f});
  return m;
}

}  // namespace

Tensor load_f32_vector(io::WeightStore& ws, const std::string& name, int64_t dim, float add) {
  Tensor src = ws.get(name, {dim});
  Tensor out = Tensor::empty({dim}, DType::kF32);
  for (int64_t i = 0; i < dim; ++i) out.data<float>()[i] = element_f32(src, i) + add;
  return out;
}

DecoderWeights load_hf_weights(io::WeightStore& ws, const ModelConfig& c, const HfLayout& l) {
  DecoderWeights w;
  int64_t d = c.hidden_size;
  float add = l.norm_plus_one ? 1.0f : 0.0f;
  w.embed = ws.get("model.embed_tokens.weight", {c.vocab_size, d});
  for (int64_t il = 0; il < c.n_layers; ++il) {
    std::string p = fmt::format("model.layers.{}.", il);
    LayerWeights lw;
    lw.attn_norm = load_f32_vector(ws, p + "input_layernorm.weight", d, add);
    if (l.sandwich_norms) {
      lw.post_attn_norm = load_f32_vector(ws, p + "post_attention_layernorm.weight", d, add);
      lw.ffn_norm = load_f32_vector(ws, p + "pre_feedforward_layernorm.weight", d, add);
      lw.post_ffn_norm = load_f32_vector(ws, p + "post_feedforward_layernorm.weight", d, add);
    } else {
      lw.ffn_norm = load_f32_vector(ws, p + "post_attention_layernorm.weight", d, add);
    }
    lw.attn = load_attention(ws, c, l, p + "self_attn.");
    lw.mlp = load_mlp(ws, c, l, p + "mlp.");
    w.layers.push_back(std::move(lw));
  }
  w.final_norm = load_f32_vector(ws, "model.norm.weight", d, add);
  w.lm_head = c.tie_word_embeddings ? w.embed : ws.get("lm_head.weight", {c.vocab_size, d});
  return w;
}

}  // namespace cairn
