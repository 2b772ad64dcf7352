// Small helpers for the tensor-parallel unit tests: a tiny config whose sizes
// leave a vocabulary remainder, and tensors read back as vectors.
#pragma once

#include <cstring>
#include <vector>

#include "core/tensor.h"
#include "model/config.h"

namespace cairn::tp::test {

// 6 heads of 8, 3 KV heads, hidden 48, intermediate 96, vocabulary 37 (valid
// sizes 1, 3, 6; at 3 ranks the vocabulary splits 13, 12, 12).
inline ModelConfig tiny_config(bool tied) {
  ModelConfig c;
  c.path = "tiny";
  c.model_type = "llama";
  c.vocab_size = 37;
  c.hidden_size = 48;
  c.n_layers = 2;
  c.n_heads = 6;
  c.n_kv_heads = 3;
  c.head_dim = 8;
  c.intermediate_size = 96;
  c.max_position_embeddings = 64;
  c.norm_eps = 1e-5;
  c.tie_word_embeddings = tied;
  c.layer_window.assign(2, 0);
  return c;
}

// The bytes of rows [begin, end) of t (contiguous), for bitwise comparisons.
inline std::vector<uint8_t> row_bytes(const Tensor& t, int64_t begin, int64_t end) {
  Tensor s = t.slice_rows(begin, end);
  const auto* p = static_cast<const uint8_t*>(s.raw());
  return std::vector<uint8_t>(p, p + s.nbytes());
}

inline std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

}  // namespace cairn::tp::test
