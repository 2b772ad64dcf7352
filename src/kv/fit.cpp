#include "kv/fit.h"

#include <algorithm>

#include "kv/page_layout.h"

namespace cairn {

int64_t kv_bytes_at(const FitInput& in, int64_t ctx) {
  if (ctx <= 0) return 0;
  const ModelConfig& c = in.config;
  const bool quantized = in.quant.enabled() && ctx >= in.quant.quant_start;
  const std::vector<LayerFormat> full(static_cast<size_t>(c.n_layers), full_format(in.full_store));
  const std::vector<LayerFormat>& formats = quantized ? in.quant.layers : full;
  const int64_t pt = in.page_tokens;
  int64_t bytes = 0;
  for (const LayerGroup& g : layer_groups(c)) {
    int64_t pages = (ctx + pt - 1) / pt;
    if (g.window > 0) pages = std::min(pages, (g.window + in.rollback_tokens + pt - 1) / pt + 1);
    bytes += pages * make_page_layout(g, formats, pt, c.n_kv_heads, c.head_dim).page_bytes;
  }
  return bytes;
}

int64_t workspace_bytes(const FitInput& in) {
  const ModelConfig& c = in.config;
  const int64_t rows = std::max<int64_t>(in.prefill_chunk_tokens, in.batch);
  const int64_t qkv = (c.n_heads + 2 * c.n_kv_heads) * c.head_dim;
  const int64_t per_row =
      4 * c.hidden_size + 2 * c.intermediate_size + qkv + c.n_heads * c.head_dim;
  return 4 * (rows * per_row + static_cast<int64_t>(in.batch) * c.vocab_size);
}

int64_t estimate_params(const ModelConfig& c) {
  const int64_t h = c.hidden_size;
  const int64_t embed = c.vocab_size * h * (c.tie_word_embeddings ? 1 : 2);
  const int64_t attn = h * (c.n_heads + 2 * c.n_kv_heads) * c.head_dim + c.n_heads * c.head_dim * h;
  const int64_t mlp = 3 * h * c.intermediate_size;
  return embed + c.n_layers * (attn + mlp + 2 * h) + h;
}

FitResult plan_fit(const FitInput& in) {
  FitResult r;
  r.kv_bytes_per_seq = kv_bytes_at(in, in.ctx_tokens);
  r.kv_bytes = r.kv_bytes_per_seq * in.batch;
  r.workspace_bytes = workspace_bytes(in);
  r.total_bytes = in.weight_bytes + r.kv_bytes + r.workspace_bytes;
  r.fits = in.budget_bytes <= 0 || r.total_bytes <= in.budget_bytes;
  r.max_ctx_tokens = -1;
  if (in.budget_bytes > 0) {
    const int64_t room = in.budget_bytes - in.weight_bytes - r.workspace_bytes;
    const int64_t limit = in.config.max_position_embeddings > 0 ? in.config.max_position_embeddings
                                                                : int64_t{1} << 22;
    // kv_bytes_at is not monotone (bf16-first drops at quant_start): scan page multiples.
    for (int64_t ctx = in.page_tokens; ctx <= limit; ctx += in.page_tokens)
      if (kv_bytes_at(in, ctx) * in.batch <= room) r.max_ctx_tokens = ctx;
    if (r.max_ctx_tokens > 0 && limit % in.page_tokens != 0 &&
        kv_bytes_at(in, limit) * in.batch <= room)
      r.max_ctx_tokens = limit;
  }
  if (in.bandwidth_gbs > 0) {
    const double step_bytes = static_cast<double>(in.weight_bytes + r.kv_bytes);
    r.decode_tokens_per_s = in.bandwidth_gbs * 1e9 / step_bytes;
    r.decode_tokens_per_s_all = r.decode_tokens_per_s * in.batch;
  }
  return r;
}

}  // namespace cairn
