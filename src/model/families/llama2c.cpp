// llama2.c checkpoints as llama-family models: interleaved rope pairs (2i, 2i+1),
// theta 10000, RMSNorm eps 1e-5, SiLU-gated MLP (w1 gate, w3 up, w2 down), the
// classifier shared with the embedding when the header's vocab_size is positive.
#include "io/llama2c_checkpoint.h"
#include "model/decoder.h"
#include "model/families/families.h"

namespace cairn::families {
namespace {

ModelConfig config_from_header(const io::Llama2cCheckpoint& ck) {
  const io::Llama2cHeader& h = ck.header;
  ModelConfig c;
  c.path = ck.path;
  c.format = "llama2c";
  c.model_type = "llama";
  c.vocab_size = h.vocab_size;
  c.hidden_size = h.dim;
  c.n_layers = h.n_layers;
  c.n_heads = h.n_heads;
  c.n_kv_heads = h.n_kv_heads;
  c.head_dim = h.dim / h.n_heads;
  c.intermediate_size = h.hidden_dim;
  c.max_position_embeddings = h.seq_len;
  c.norm_eps = 1e-5;
  c.tie_word_embeddings = h.shared_classifier;
  c.torch_dtype = "float32";
  c.rope_interleaved = true;
  c.layer_window.assign(static_cast<size_t>(h.n_layers), 0);
  c.bos_token_id = 1;
  c.eos_token_ids = {2};
  for (const Tensor* t : {&ck.token_embedding, &ck.rms_att, &ck.wq, &ck.wk, &ck.wv, &ck.wo,
                          &ck.rms_ffn, &ck.w1, &ck.w2, &ck.w3, &ck.rms_final})
    c.weights.n_params += t->numel();
  if (!h.shared_classifier) c.weights.n_params += ck.classifier.numel();
  c.weights.bytes_by_dtype["F32"] = c.weights.n_params * 4;  // the legacy rope tables aside
  c.weights.total_bytes = static_cast<int64_t>(ck.file_bytes);
  return c;
}

}  // namespace

ModelConfig llama2c_config(const std::string& path) {
  return config_from_header(io::load_llama2c_checkpoint(path));
}

std::unique_ptr<Model> load_llama2c(const std::string& path) {
  io::Llama2cCheckpoint ck = io::load_llama2c_checkpoint(path);
  ModelConfig c = config_from_header(ck);
  DecoderWeights w;
  w.embed = ck.token_embedding;
  for (int64_t il = 0; il < c.n_layers; ++il) {
    LayerWeights lw;
    lw.attn_norm = ck.rms_att.row(il);
    lw.ffn_norm = ck.rms_ffn.row(il);
    lw.attn.wq = ck.wq.row(il);
    lw.attn.wk = ck.wk.row(il);
    lw.attn.wv = ck.wv.row(il);
    lw.attn.wo = ck.wo.row(il);
    lw.mlp.gate = ck.w1.row(il);
    lw.mlp.down = ck.w2.row(il);
    lw.mlp.up = ck.w3.row(il);
    w.layers.push_back(std::move(lw));
  }
  w.final_norm = ck.rms_final;
  w.lm_head = ck.classifier;
  DecoderOptions o = default_decoder_options(c);
  return std::make_unique<DecoderModel>(c, std::move(w), std::move(o));
}

}  // namespace cairn::families
