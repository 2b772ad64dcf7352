// Layer groups and the byte layout of their pages. A page holds page_tokens
// positions of every layer of one group: for each layer of the group, in
// order, a K block [page_tokens, n_kv_heads, row_bytes] then a V block of the
// same shape, row_bytes set by that layer's format.
#pragma once

#include <cstdint>
#include <vector>

#include "kv/kv_format.h"

namespace cairn {

struct ModelConfig;

struct LayerGroup {
  int32_t window = 0;       // 0: full attention; W: sliding window of W positions
  std::vector<int> layers;  // model layer indices, ascending
};

// Full-attention layers first (when any), then one group per distinct window, ascending.
std::vector<LayerGroup> layer_groups(const ModelConfig& c);

struct PageLayout {
  std::vector<LayerFormat> formats;  // [group layers]
  std::vector<size_t> k_offset;      // [group layers] bytes from the page start to the K block
  std::vector<size_t> v_offset;      // [group layers]
  std::vector<size_t> token_bytes;   // [group layers] n_kv_heads * row_bytes
  int64_t page_bytes = 0;
};

// model_formats [n_layers]: each model layer's format; the group picks its layers'.
PageLayout make_page_layout(const LayerGroup& g, const std::vector<LayerFormat>& model_formats,
                            int64_t page_tokens, int64_t n_kv_heads, int64_t head_dim);

}  // namespace cairn
