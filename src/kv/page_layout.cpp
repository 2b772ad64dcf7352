#include "kv/page_layout.h"

#include <map>

#include "model/config.h"

namespace cairn {

std::vector<LayerGroup> layer_groups(const ModelConfig& c) {
  std::map<int32_t, std::vector<int>> by_window;  // window 0 sorts first
  for (int il = 0; il < c.n_layers; ++il)
    by_window[c.layer_window.empty() ? 0 : c.layer_window[static_cast<size_t>(il)]].push_back(il);
  std::vector<LayerGroup> out;
  for (auto& [w, layers] : by_window) out.push_back({w, std::move(layers)});
  return out;
}

PageLayout make_page_layout(const LayerGroup& g, const std::vector<LayerFormat>& model_formats,
                            int64_t page_tokens, int64_t n_kv_heads, int64_t head_dim) {
  PageLayout l;
  size_t at = 0;
  for (int il : g.layers) {
    const LayerFormat& f = model_formats[static_cast<size_t>(il)];
    const size_t tb = static_cast<size_t>(n_kv_heads) * f.row_bytes(head_dim);
    l.formats.push_back(f);
    l.token_bytes.push_back(tb);
    l.k_offset.push_back(at);
    at += tb * static_cast<size_t>(page_tokens);
    l.v_offset.push_back(at);
    at += tb * static_cast<size_t>(page_tokens);
  }
  l.page_bytes = static_cast<int64_t>(at);
  return l;
}

}  // namespace cairn
