#include "model/device_weights.h"

#include <cmath>

#include "backend/device.h"

namespace cairn {
namespace {

// The backend that copies between a and b: a GPU's when either is on one (the host's
// cannot read device memory).
DeviceBackend& copier(Device a, Device b) {
  return device_backend(a.kind != DeviceKind::kCpu ? a.kind : b.kind);
}

Tensor copy_to(const Tensor& t, Device device) {
  if (!t.defined()) return t;
  Tensor d = empty_on(device, t.shape(), t.dtype());
  copier(t.device(), device).copy(t, d);
  return d;
}

Tensor random_matrix(int64_t rows, int64_t cols, DType dtype, Device device, uint64_t seed) {
  Tensor t = empty_on(device, {rows, cols}, dtype);
  float a = 0.5f / std::sqrt(static_cast<float>(cols));
  device_backend(device.kind).fill_uniform(t, seed, -a, a);
  return t;
}

// A norm weight of ones (uniform in [1, 1)).
Tensor ones(int64_t n, Device device) {
  Tensor t = empty_on(device, {n}, DType::kF32);
  device_backend(device.kind).fill_uniform(t, 0, 1.0f, 1.0f);
  return t;
}

}  // namespace

DecoderWeights weights_on(const DecoderWeights& w, Device device) {
  DecoderWeights d;
  d.embed = copy_to(w.embed, device);
  bool tied = w.lm_head.storage() == w.embed.storage() &&
              w.lm_head.offset_bytes() == w.embed.offset_bytes();
  d.lm_head = tied ? d.embed : copy_to(w.lm_head, device);
  d.final_norm = copy_to(w.final_norm, device);
  for (const LayerWeights& l : w.layers) {
    LayerWeights x;
    x.attn_norm = copy_to(l.attn_norm, device);
    x.post_attn_norm = copy_to(l.post_attn_norm, device);
    x.ffn_norm = copy_to(l.ffn_norm, device);
    x.post_ffn_norm = copy_to(l.post_ffn_norm, device);
    const AttentionWeights& a = l.attn;
    x.attn = {copy_to(a.wq, device),
              copy_to(a.wk, device),
              copy_to(a.wv, device),
              copy_to(a.wo, device),
              copy_to(a.bq, device),
              copy_to(a.bk, device),
              copy_to(a.bv, device),
              copy_to(a.q_norm, device),
              copy_to(a.k_norm, device),
              Tensor(),
              Tensor()};  // fused again on the device (fuse_projections)
    x.mlp = {copy_to(l.mlp.gate, device), copy_to(l.mlp.up, device), copy_to(l.mlp.down, device),
             Tensor()};
    d.layers.push_back(std::move(x));
  }
  copier(w.embed.device(), device).synchronize();
  return d;
}

DecoderWeights random_weights(const ModelConfig& c, DType dtype, Device device, bool qk_norm,
                              uint64_t seed) {
  DecoderWeights w;
  const int64_t h = c.hidden_size, hd = c.head_dim, f = c.intermediate_size;
  w.embed = random_matrix(c.vocab_size, h, dtype, device, seed++);
  w.lm_head =
      c.tie_word_embeddings ? w.embed : random_matrix(c.vocab_size, h, dtype, device, seed++);
  w.final_norm = ones(h, device);
  for (int il = 0; il < c.n_layers; ++il) {
    LayerWeights l;
    l.attn_norm = ones(h, device);
    l.ffn_norm = ones(h, device);
    if (c.model_type == "gemma2" || c.model_type == "gemma3_text") {
      l.post_attn_norm = ones(h, device);
      l.post_ffn_norm = ones(h, device);
    }
    l.attn.wq = random_matrix(c.n_heads * hd, h, dtype, device, seed++);
    l.attn.wk = random_matrix(c.n_kv_heads * hd, h, dtype, device, seed++);
    l.attn.wv = random_matrix(c.n_kv_heads * hd, h, dtype, device, seed++);
    l.attn.wo = random_matrix(h, c.n_heads * hd, dtype, device, seed++);
    if (qk_norm) {
      l.attn.q_norm = ones(hd, device);
      l.attn.k_norm = ones(hd, device);
    }
    l.mlp.gate = random_matrix(f, h, dtype, device, seed++);
    l.mlp.up = random_matrix(f, h, dtype, device, seed++);
    l.mlp.down = random_matrix(h, f, dtype, device, seed++);
    w.layers.push_back(std::move(l));
  }
  device_backend(device.kind).synchronize();
  return w;
}

}  // namespace cairn
