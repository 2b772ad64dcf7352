#include "kv/paged_kv.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "kv/page_attention.h"
#include "kv/row_codec.h"

namespace cairn {

PagedKvState::PagedKvState(const ModelConfig& config, const PagedKvOptions& o)
    : config_(config),
      page_tokens_(o.page_tokens),
      rollback_tokens_(o.rollback_tokens),
      quant_(o.quant),
      pool_(o.budget_bytes, o.device) {
  if (page_tokens_ <= 0)
    fail(ErrorCode::kInvalidArgument, "page_tokens {} must be > 0", page_tokens_);
  if (rollback_tokens_ < 0)
    fail(ErrorCode::kInvalidArgument, "rollback_tokens {} must be ≥ 0", rollback_tokens_);
  if (quant_.enabled() && static_cast<int64_t>(quant_.layers.size()) != config.n_layers)
    fail(ErrorCode::kInvalidArgument, "KV scheme lists {} layers, the model has {}",
         quant_.layers.size(), config.n_layers);
  const LayerFormat full = full_format(o.full_store.value_or(full_store_for(config)));
  const std::vector<LayerFormat> full_all(static_cast<size_t>(config.n_layers), full);
  const std::vector<LayerFormat>& quant_all = quant_.enabled() ? quant_.layers : full_all;
  layer_groups_ = layer_groups(config);
  group_of_.assign(static_cast<size_t>(config.n_layers), 0);
  index_in_group_.assign(static_cast<size_t>(config.n_layers), 0);
  for (size_t g = 0; g < layer_groups_.size(); ++g) {
    GroupInfo gi{layer_groups_[g], {}, {}, -1, -1};
    gi.full =
        make_page_layout(gi.group, full_all, page_tokens_, config.n_kv_heads, config.head_dim);
    gi.quant =
        make_page_layout(gi.group, quant_all, page_tokens_, config.n_kv_heads, config.head_dim);
    const std::string w = gi.group.window > 0 ? fmt::format("window {}", gi.group.window) : "full";
    gi.full_arena = pool_.add_arena(gi.full.page_bytes, fmt::format("{} {}", w, full.name()));
    gi.quant_arena = gi.quant.formats == gi.full.formats
                         ? gi.full_arena
                         : pool_.add_arena(gi.quant.page_bytes, fmt::format("{} quantized", w));
    for (size_t i = 0; i < gi.group.layers.size(); ++i) {
      group_of_[static_cast<size_t>(gi.group.layers[i])] = static_cast<int>(g);
      index_in_group_[static_cast<size_t>(gi.group.layers[i])] = static_cast<int>(i);
    }
    groups_.push_back(std::move(gi));
  }
}

PagedKvState::Sequence& PagedKvState::seq_for(int32_t slot) {
  if (slot < 0 || slot > (1 << 20))
    fail(ErrorCode::kInvalidArgument, "KV slot {} outside [0, 2^20]", slot);
  if (static_cast<size_t>(slot) >= seqs_.size()) seqs_.resize(static_cast<size_t>(slot) + 1);
  Sequence& s = seqs_[static_cast<size_t>(slot)];
  if (!s.used) {
    s = Sequence{};
    s.used = true;
    s.n_layer.assign(static_cast<size_t>(config_.n_layers), 0);
    s.groups.resize(groups_.size());
  }
  return s;
}

const PagedKvState::Sequence& PagedKvState::seq_at(int32_t slot) const {
  static const Sequence kEmpty{};
  if (slot < 0 || static_cast<size_t>(slot) >= seqs_.size()) return kEmpty;
  return seqs_[static_cast<size_t>(slot)];
}

const PageLayout& PagedKvState::layout(const Sequence& s, int g) const {
  const GroupInfo& gi = groups_[static_cast<size_t>(g)];
  return s.quantized ? gi.quant : gi.full;
}

int32_t PagedKvState::arena(const Sequence& s, int g) const {
  const GroupInfo& gi = groups_[static_cast<size_t>(g)];
  return s.quantized ? gi.quant_arena : gi.full_arena;
}

// Makes pages for positions [begin, end) of group g present and private to s.
void PagedKvState::ensure_pages(Sequence& s, int g, int64_t begin, int64_t end) {
  GroupState& gs = s.groups[static_cast<size_t>(g)];
  const int32_t a = arena(s, g);
  for (int64_t pi = begin / page_tokens_; pi <= (end - 1) / page_tokens_; ++pi) {
    const auto i = static_cast<size_t>(pi);
    if (i == gs.pages.size()) {
      gs.pages.push_back(pool_.allocate_one(a));
    } else if (pool_.ref_count(a, gs.pages[i]) > 1) {  // copy on write
      const int32_t copy = pool_.allocate_one(a);
      pool_.copy_page(a, gs.pages[i], copy);
      pool_.release(a, gs.pages[i]);
      gs.pages[i] = copy;
    }
  }
}

void PagedKvState::check_positions(const Sequence& s, int il, const SeqSpan& span,
                                   const ForwardBatch& b) const {
  const int64_t len = s.n_layer[static_cast<size_t>(il)];
  for (int64_t i = 0; i < span.n_tokens; ++i) {
    const int32_t pos = b.positions[static_cast<size_t>(span.token_begin + i)];
    if (pos != len + i)
      fail(ErrorCode::kInvalidArgument, "KV slot {} expects position {}, the batch gives {}",
           span.seq_slot, len + i, pos);
  }
}

void PagedKvState::write_rows(Sequence& s, int il, const SeqSpan& span, const ForwardBatch& b,
                              const Tensor& k, const Tensor& v) {
  const int g = group_of_[static_cast<size_t>(il)];
  const auto li = static_cast<size_t>(index_in_group_[static_cast<size_t>(il)]);
  int64_t& len = s.n_layer[static_cast<size_t>(il)];
  check_positions(s, il, span, b);
  ensure_pages(s, g, len, len + span.n_tokens);
  const PageLayout& lay = layout(s, g);
  const int32_t a = arena(s, g);
  const LayerFormat& f = lay.formats[li];
  const size_t row_bytes = f.row_bytes(config_.head_dim);
  const GroupState& gs = s.groups[static_cast<size_t>(g)];
  for (int64_t i = 0; i < span.n_tokens; ++i) {
    const int64_t pos = len + i;
    uint8_t* page = pool_.data(a, gs.pages[static_cast<size_t>(pos / page_tokens_)]);
    const size_t row_at = static_cast<size_t>(pos % page_tokens_) * lay.token_bytes[li];
    for (int64_t h = 0; h < config_.n_kv_heads; ++h) {
      const int64_t src = ((span.token_begin + i) * config_.n_kv_heads + h) * config_.head_dim;
      const size_t dst = row_at + static_cast<size_t>(h) * row_bytes;
      encode_row(k.data<float>() + src, config_.head_dim, f, page + lay.k_offset[li] + dst);
      encode_row(v.data<float>() + src, config_.head_dim, f, page + lay.v_offset[li] + dst);
    }
  }
  len += span.n_tokens;
}

void PagedKvState::attend(const Sequence& s, int il, const SeqSpan& span, const ForwardBatch& b,
                          const Tensor& q, const ops::AttentionParams& p, Tensor& out) const {
  const int g = group_of_[static_cast<size_t>(il)];
  const auto li = static_cast<size_t>(index_in_group_[static_cast<size_t>(il)]);
  const PageLayout& lay = layout(s, g);
  const int32_t a = arena(s, g);
  const GroupState& gs = s.groups[static_cast<size_t>(g)];
  std::vector<const uint8_t*> kp(gs.pages.size()), vp(gs.pages.size());
  for (size_t i = 0; i < gs.pages.size(); ++i) {
    if (gs.pages[i] < 0) continue;
    const uint8_t* base = pool_.data(a, gs.pages[i]);
    kp[i] = base + lay.k_offset[li];
    vp[i] = base + lay.v_offset[li];
  }
  PagedRows rows{kp,
                 vp,
                 page_tokens_,
                 lay.token_bytes[li],
                 lay.formats[li].row_bytes(config_.head_dim),
                 lay.formats[li],
                 s.n_layer[static_cast<size_t>(il)]};
  const int64_t row = q.dim(1) * config_.head_dim;
  std::span<const int32_t> q_pos(b.positions.data() + span.token_begin,
                                 static_cast<size_t>(span.n_tokens));
  attend_paged(rows, q.data<float>() + span.token_begin * row, q_pos, q.dim(1), config_.n_kv_heads,
               config_.head_dim, p, out.data<float>() + span.token_begin * row);
}

void PagedKvState::append_and_attend(int il, const ForwardBatch& batch, const Tensor& q,
                                     const Tensor& k, const Tensor& v,
                                     const ops::AttentionParams& p, Tensor& out) {
  CAIRN_CHECK(il >= 0 && il < config_.n_layers, "layer {} of {}", il, config_.n_layers);
  CAIRN_CHECK(k.dtype() == DType::kF32 && k.is_contiguous() && v.is_contiguous() &&
                  q.is_contiguous() && out.is_contiguous(),
              "contiguous f32 q/k/v/out expected, got k {}", k.describe());
  CAIRN_CHECK(k.dim(1) == config_.n_kv_heads && k.dim(2) == config_.head_dim, "k shape {}",
              k.describe());
  if (!pool_.on_host()) return append_and_attend_device(il, batch, q, k, v, p, out);
  for (const SeqSpan& span : batch.spans) {
    if (span.n_tokens == 0) continue;
    Sequence& s = seq_for(span.seq_slot);
    for (const std::shared_ptr<LayerGate>& gate : s.gates) gate->wait_layer(il);
    write_rows(s, il, span, batch, k, v);
    attend(s, il, span, batch, q, p, out);
    after_layer(s, il);
  }
}

// After layer il of a sequence's span: a sliding group past its window gives
// pages back; after the model's last layer the sequence's length counts, and
// one that reached quant_start converts.
void PagedKvState::after_layer(Sequence& s, int il) {
  const int g = group_of_[static_cast<size_t>(il)];
  if (groups_[static_cast<size_t>(g)].group.layers.back() == il) release_window(s, g);
  if (il == config_.n_layers - 1) {
    s.n_tokens = s.n_layer[static_cast<size_t>(il)];
    if (quant_.enabled() && !s.quantized && s.n_tokens >= quant_.quant_start) convert(s);
  }
}

void PagedKvState::release_window(Sequence& s, int g) {
  const int32_t w = groups_[static_cast<size_t>(g)].group.window;
  if (w <= 0) return;
  GroupState& gs = s.groups[static_cast<size_t>(g)];
  const int64_t len =
      s.n_layer[static_cast<size_t>(groups_[static_cast<size_t>(g)].group.layers.back())];
  const int64_t keep_from = len - w - rollback_tokens_;  // later queries need positions ≥ it
  for (int64_t pi = gs.released_below / page_tokens_; (pi + 1) * page_tokens_ <= keep_from; ++pi) {
    int32_t& id = gs.pages[static_cast<size_t>(pi)];
    if (id >= 0) pool_.release(arena(s, g), id);
    id = -1;
    gs.released_below = (pi + 1) * page_tokens_;
  }
}

}  // namespace cairn
