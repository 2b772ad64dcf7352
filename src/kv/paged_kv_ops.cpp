// PagedKvState's sequence operations: planning, trim, fork, conversion,
// export and import (append and attention are in paged_kv.cpp).
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "core/error.h"
#include "kv/paged_kv.h"
#include "kv/row_codec.h"

namespace cairn {

bool PagedKvState::can_append(int32_t slot, int64_t n) const {
  const Sequence& s = seq_at(slot);
  int64_t bytes = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const int64_t have = s.used ? static_cast<int64_t>(s.groups[g].pages.size()) : 0;
    const int64_t need = (s.n_tokens + n + page_tokens_ - 1) / page_tokens_;
    bytes += std::max<int64_t>(0, need - have) * pool_.page_bytes(arena(s, static_cast<int>(g)));
  }
  return bytes <= pool_.free_bytes();
}

int64_t PagedKvState::n_tokens(int32_t slot) const {
  return seq_at(slot).n_tokens;
}
bool PagedKvState::is_quantized(int32_t slot) const {
  return seq_at(slot).quantized;
}
int64_t PagedKvState::min_reusable_tokens(int32_t slot) const {
  return seq_at(slot).min_reusable;
}

// Every shard's forward waits (a tensor-parallel rank reads its own shard).
void PagedKvState::add_gate(int32_t slot, std::shared_ptr<LayerGate> gate) {
  for (auto& o : others_) o->add_gate(slot, gate);
  std::vector<std::shared_ptr<LayerGate>>& gates = seq_for(slot).gates;
  if (std::find(gates.begin(), gates.end(), gate) == gates.end()) gates.push_back(std::move(gate));
}

std::vector<std::shared_ptr<LayerGate>> PagedKvState::take_gates(int32_t slot) {
  for (auto& o : others_) o->take_gates(slot);  // the same gates as shard 0's
  if (slot < 0 || static_cast<size_t>(slot) >= seqs_.size()) return {};
  return std::exchange(seqs_[static_cast<size_t>(slot)].gates, {});
}

const std::vector<std::shared_ptr<LayerGate>>& PagedKvState::gates(int32_t slot) const {
  return seq_at(slot).gates;
}

void PagedKvState::release_from(Sequence& s, int g, size_t first_page) {
  GroupState& gs = s.groups[static_cast<size_t>(g)];
  for (size_t i = first_page; i < gs.pages.size(); ++i)
    if (gs.pages[i] >= 0) pool_.release(arena(s, g), gs.pages[i]);
  gs.pages.resize(std::min(first_page, gs.pages.size()));
}

void PagedKvState::free_sequence(int32_t slot) {
  for (auto& o : others_) o->free_sequence(slot);
  if (slot < 0 || static_cast<size_t>(slot) >= seqs_.size()) return;
  Sequence& s = seqs_[static_cast<size_t>(slot)];
  if (!s.used) return;
  for (size_t g = 0; g < groups_.size(); ++g) release_from(s, static_cast<int>(g), 0);
  s = Sequence{};
}

bool PagedKvState::can_trim(int32_t slot, int64_t n_keep) const {
  const Sequence& s = seq_at(slot);
  if (n_keep < 0 || n_keep > s.n_tokens) return false;
  if (!s.used) return true;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const int32_t w = groups_[g].group.window;
    if (w > 0 && s.groups[g].released_below > std::max<int64_t>(0, n_keep - w)) return false;
  }
  return true;
}

void PagedKvState::trim(int32_t slot, int64_t n_keep) {
  Sequence& s = seq_for(slot);
  if (!can_trim(slot, n_keep))
    fail(ErrorCode::kInvalidArgument,
         "trim of slot {} to {} positions: it holds {}, or a sliding window already released "
         "positions the shorter sequence needs (rollback {})",
         slot, n_keep, s.n_tokens, rollback_tokens_);
  for (size_t g = 0; g < groups_.size(); ++g)
    release_from(s, static_cast<int>(g),
                 static_cast<size_t>((n_keep + page_tokens_ - 1) / page_tokens_));
  s.n_tokens = n_keep;
  std::fill(s.n_layer.begin(), s.n_layer.end(), n_keep);
  for (auto& o : others_) o->trim(slot, n_keep);
}

void PagedKvState::fork(int32_t src, int32_t dst, int64_t n) {
  if (src == dst) fail(ErrorCode::kInvalidArgument, "fork of slot {} onto itself", src);
  if (seq_at(dst).used && seq_at(dst).n_tokens > 0)
    fail(ErrorCode::kInvalidArgument, "fork into slot {}: it is not empty", dst);
  if (n < 0 || n > seq_at(src).n_tokens)
    fail(ErrorCode::kInvalidArgument, "fork of {} positions; slot {} holds {}", n, src,
         seq_at(src).n_tokens);
  Sequence& d = seq_for(dst);
  const Sequence& s = seqs_[static_cast<size_t>(src)];  // after seq_for: no reallocation below
  d.n_tokens = n;
  std::fill(d.n_layer.begin(), d.n_layer.end(), n);
  d.gates = s.gates;  // the shared pages may still be arriving
  d.quantized = s.quantized;
  d.min_reusable = s.min_reusable;
  const auto n_pages = static_cast<size_t>((n + page_tokens_ - 1) / page_tokens_);
  for (size_t g = 0; g < groups_.size(); ++g) {
    d.groups[g].released_below = std::min(s.groups[g].released_below, n);
    for (size_t i = 0; i < n_pages; ++i) {
      const int32_t id = s.groups[g].pages[i];
      if (id >= 0) pool_.retain(arena(s, static_cast<int>(g)), id);
      d.groups[g].pages.push_back(id);
    }
  }
  for (auto& o : others_) o->fork(src, dst, n);
}

void PagedKvState::quantize_now(int32_t slot) {
  Sequence& s = seq_for(slot);
  if (quant_.enabled() && !s.quantized) convert(s);
  for (auto& o : others_) o->quantize_now(slot);
}

// Re-encodes every row of page `from` (full layout) into page `to` (quantized layout).
void PagedKvState::convert_page(const GroupInfo& gi, int32_t from, int32_t to) {
  if (!pool_.on_host()) return convert_page_device(gi, from, to);
  const uint8_t* src = pool_.data(gi.full_arena, from);
  uint8_t* dst = pool_.data(gi.quant_arena, to);
  std::vector<float> row(static_cast<size_t>(config_.head_dim));
  for (size_t li = 0; li < gi.group.layers.size(); ++li) {
    const LayerFormat &ff = gi.full.formats[li], &qf = gi.quant.formats[li];
    const size_t fr = ff.row_bytes(config_.head_dim), qr = qf.row_bytes(config_.head_dim);
    const int64_t n_rows = page_tokens_ * config_.n_kv_heads;
    for (int kv = 0; kv < 2; ++kv) {
      const uint8_t* s = src + (kv ? gi.full.v_offset[li] : gi.full.k_offset[li]);
      uint8_t* d = dst + (kv ? gi.quant.v_offset[li] : gi.quant.k_offset[li]);
      for (int64_t r = 0; r < n_rows; ++r) {
        decode_row(s + static_cast<size_t>(r) * fr, config_.head_dim, ff, row.data());
        encode_row(row.data(), config_.head_dim, qf, d + static_cast<size_t>(r) * qr);
      }
    }
  }
}

// Converts s's pages, one at a time (the peak is one page per group above the
// full-precision footprint, plus copies of pages shared with other sequences).
void PagedKvState::convert(Sequence& s) {
  CAIRN_CHECK(!s.quantized, "sequence converted twice");
  for (size_t g = 0; g < groups_.size(); ++g) {
    const GroupInfo& gi = groups_[g];
    if (gi.quant_arena == gi.full_arena) continue;
    int64_t need = 1;
    for (int32_t id : s.groups[g].pages)
      if (id >= 0 && pool_.ref_count(gi.full_arena, id) > 1) ++need;
    if (!pool_.can_allocate(gi.quant_arena, need))
      fail(ErrorCode::kOutOfMemory, "KV pool: no room to convert a sequence to {}",
           pool_.arena_name(gi.quant_arena));
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    const GroupInfo& gi = groups_[g];
    if (gi.quant_arena == gi.full_arena) continue;
    for (int32_t& id : s.groups[g].pages) {
      if (id < 0) continue;
      const int32_t q = pool_.allocate_one(gi.quant_arena);
      convert_page(gi, id, q);
      pool_.release(gi.full_arena, id);
      id = q;
    }
  }
  s.quantized = true;
  s.min_reusable = s.n_tokens;
}

SequenceExport PagedKvState::export_sequence(int32_t slot) const {
  if (!pool_.on_host())
    fail(ErrorCode::kUnsupported, "KV export of pages off the host (read_page copies them)");
  const Sequence& s = seq_at(slot);
  SequenceExport e{page_tokens_, s.n_tokens, s.quantized, s.min_reusable, {}};
  for (size_t g = 0; g < groups_.size(); ++g) {
    const PageLayout& lay = layout(s, static_cast<int>(g));
    ExportedGroup eg{groups_[g].group.window, lay.formats, lay.page_bytes, {}};
    if (s.used)
      for (size_t i = 0; i < s.groups[g].pages.size(); ++i) {
        const int32_t id = s.groups[g].pages[i];
        if (id < 0) continue;
        eg.pages.push_back(
            {static_cast<int64_t>(i) * page_tokens_,
             {pool_.data(arena(s, static_cast<int>(g)), id), static_cast<size_t>(lay.page_bytes)}});
      }
    e.groups.push_back(std::move(eg));
  }
  return e;
}

namespace {

void check_import(const SequenceExport& e, size_t g, const std::vector<LayerFormat>& formats,
                  int32_t window, int64_t page_bytes) {
  const ExportedGroup& eg = e.groups[g];
  if (eg.window != window || eg.formats != formats || eg.page_bytes != page_bytes)
    fail(ErrorCode::kInvalidArgument,
         "KV import: group {} is window {} with {} pages of {} bytes; this state expects "
         "window {}, {}, {} bytes",
         g, eg.window, eg.formats.empty() ? "?" : eg.formats[0].name(), eg.page_bytes, window,
         formats.empty() ? "?" : formats[0].name(), page_bytes);
  for (const ExportedPage& p : eg.pages)
    if (p.bytes.size() != static_cast<size_t>(page_bytes) || p.first_token % e.page_tokens != 0)
      fail(ErrorCode::kInvalidArgument, "KV import: group {}: a page of {} bytes at token {}", g,
           p.bytes.size(), p.first_token);
}

}  // namespace

void PagedKvState::import_sequence(int32_t slot, const SequenceExport& e) {
  if (!others_.empty())
    fail(ErrorCode::kUnsupported, "KV import into a state sharded over {} ranks", n_shards());
  if (seq_at(slot).used && seq_at(slot).n_tokens > 0)
    fail(ErrorCode::kInvalidArgument, "KV import into slot {}: it is not empty", slot);
  if (e.page_tokens != page_tokens_ || e.groups.size() != groups_.size() || e.n_tokens < 0)
    fail(ErrorCode::kInvalidArgument,
         "KV import: {} groups of {}-token pages; this state has {} groups of {}-token pages",
         e.groups.size(), e.page_tokens, groups_.size(), page_tokens_);
  Sequence probe;
  probe.quantized = e.quantized;
  int64_t bytes = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const PageLayout& lay = layout(probe, static_cast<int>(g));
    check_import(e, g, lay.formats, groups_[g].group.window, lay.page_bytes);
    bytes += lay.page_bytes * static_cast<int64_t>(e.groups[g].pages.size());
  }
  if (bytes > pool_.free_bytes())
    fail(ErrorCode::kOutOfMemory, "KV import: {} bytes of pages, {} free", bytes,
         pool_.free_bytes());
  Sequence& s = seq_for(slot);
  s.n_tokens = e.n_tokens;
  std::fill(s.n_layer.begin(), s.n_layer.end(), e.n_tokens);
  s.quantized = e.quantized;
  s.min_reusable = e.min_reusable_tokens;
  const auto n_pages = static_cast<size_t>((e.n_tokens + page_tokens_ - 1) / page_tokens_);
  for (size_t g = 0; g < groups_.size(); ++g) {
    GroupState& gs = s.groups[g];
    gs.pages.assign(n_pages, -1);
    for (const ExportedPage& p : e.groups[g].pages) {
      const auto i = static_cast<size_t>(p.first_token / page_tokens_);
      if (i >= n_pages || gs.pages[i] >= 0) continue;
      const int32_t id = pool_.allocate_one(arena(s, static_cast<int>(g)));
      pool_.write(arena(s, static_cast<int>(g)), id, p.bytes);
      gs.pages[i] = id;
    }
    size_t lead = 0;  // released pages lead; any other hole is a malformed export
    while (lead < n_pages && gs.pages[lead] < 0) ++lead;
    gs.released_below = static_cast<int64_t>(lead) * page_tokens_;
    const bool holes = std::find(gs.pages.begin() + static_cast<std::ptrdiff_t>(lead),
                                 gs.pages.end(), -1) != gs.pages.end();
    if (holes || (lead > 0 && groups_[g].group.window == 0)) {
      free_sequence(slot);
      fail(ErrorCode::kInvalidArgument, "KV import: group {} lacks pages it needs", g);
    }
  }
}

int64_t PagedKvState::bytes_per_token(bool quantized) const {
  int64_t bytes = 0;
  for (const GroupInfo& gi : groups_)
    bytes += (quantized ? gi.quant : gi.full).page_bytes / page_tokens_;
  return bytes;
}

std::vector<int32_t> PagedKvState::page_ids(int32_t slot, int g) const {
  const Sequence& s = seq_at(slot);
  return s.used ? s.groups[static_cast<size_t>(g)].pages : std::vector<int32_t>{};
}

int32_t PagedKvState::arena_of(int32_t slot, int g) const {
  return arena(seq_at(slot), g);
}

}  // namespace cairn
