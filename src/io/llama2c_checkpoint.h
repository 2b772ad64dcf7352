// llama2.c "v0" checkpoints: a header of 7 little-endian int32 (dim, hidden_dim,
// n_layers, n_heads, n_kv_heads, vocab_size, seq_len; a negative vocab_size means
// an unshared classifier follows), then f32 arrays in a fixed order. The arrays
// come back as views of a read-only memory map.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/storage.h"
#include "core/tensor.h"

namespace cairn::io {

struct Llama2cHeader {
  int32_t dim = 0;
  int32_t hidden_dim = 0;
  int32_t n_layers = 0;
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;
  int32_t vocab_size = 0;  // absolute value
  int32_t seq_len = 0;
  bool shared_classifier = true;  // vocab_size was positive in the file
};

struct Llama2cCheckpoint {
  std::string path;
  Llama2cHeader header;
  size_t file_bytes = 0;
  // All f32; L = n_layers, D = dim, H = hidden_dim, hd = dim / n_heads.
  Tensor token_embedding;  // [vocab, D]
  Tensor rms_att;          // [L, D]
  Tensor wq;               // [L, n_heads * hd, D]
  Tensor wk;               // [L, n_kv_heads * hd, D]
  Tensor wv;               // [L, n_kv_heads * hd, D]
  Tensor wo;               // [L, D, n_heads * hd]
  Tensor rms_ffn;          // [L, D]
  Tensor w1;               // [L, H, D] gate
  Tensor w2;               // [L, D, H] down
  Tensor w3;               // [L, H, D] up
  Tensor rms_final;        // [D]
  Tensor classifier;       // [vocab, D]; the token embedding when shared
};

// True when `path` is a file whose header is plausible and whose size is exactly
// what the header implies (this tells a checkpoint from a tokenizer .bin).
bool is_llama2c_checkpoint(const std::string& path);

// Maps and checks the checkpoint. Error(kBadFile) naming the path and the field
// (header value out of range, file size not what the header implies).
Llama2cCheckpoint load_llama2c_checkpoint(const std::string& path);

}  // namespace cairn::io
