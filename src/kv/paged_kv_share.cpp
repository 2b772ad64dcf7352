// PagedKvState's sharing with holders outside sequences: adopting pages a
// prefix cache holds, and the byte plan a scheduler sums before admitting work.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "kv/paged_kv.h"

namespace cairn {

namespace {

int64_t pages_for(int64_t n_tokens, int64_t page_tokens) {
  return (n_tokens + page_tokens - 1) / page_tokens;
}

}  // namespace

// Pages group g holds after n more positions and the window release that follows.
int64_t PagedKvState::pages_after_append(const Sequence& s, int g, int64_t n) const {
  const int64_t end = s.n_tokens + n;
  const int64_t need = pages_for(end, page_tokens_);
  const int32_t w = groups_[static_cast<size_t>(g)].group.window;
  if (w <= 0) return need;
  const int64_t keep_from = std::max<int64_t>(0, end - w - rollback_tokens_);
  const int64_t first =
      std::max(s.groups[static_cast<size_t>(g)].released_below, keep_from) / page_tokens_;
  return std::max<int64_t>(0, need - first);
}

int64_t PagedKvState::bytes_to_append(int32_t slot, int64_t n) const {
  if (n <= 0) return 0;
  const Sequence& s = seq_at(slot);
  if (!s.used) {  // an empty sequence: fresh pages, perhaps converted at once
    Sequence probe;
    probe.groups.resize(groups_.size());
    return bytes_to_append_of(probe, n);
  }
  return bytes_to_append_of(s, n);
}

int64_t PagedKvState::bytes_to_append_of(const Sequence& s, int64_t n) const {
  const int64_t len = s.n_tokens, end = len + n;
  const bool converts = quant_.enabled() && !s.quantized && end >= quant_.quant_start;
  int64_t bytes = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const GroupInfo& gi = groups_[g];
    const std::vector<int32_t>& pages = s.groups[g].pages;
    const int32_t a = arena(s, static_cast<int>(g));
    const int64_t have = static_cast<int64_t>(pages.size());
    bytes += std::max<int64_t>(0, pages_for(end, page_tokens_) - have) * pool_.page_bytes(a);
    if (len % page_tokens_ != 0) {  // the partial last page is written: copied if shared
      const int32_t id = pages[static_cast<size_t>(len / page_tokens_)];
      if (id >= 0 && pool_.ref_count(a, id) > 1) bytes += pool_.page_bytes(a);
    }
    if (converts && gi.quant_arena != gi.full_arena)
      bytes += pages_after_append(s, static_cast<int>(g), n) * pool_.page_bytes(gi.quant_arena);
  }
  return bytes;
}

void PagedKvState::check_adopt(const std::vector<std::vector<int32_t>>& pages, int64_t n_tokens,
                               bool quantized) const {
  if (n_tokens < 0 || pages.size() != groups_.size())
    fail(ErrorCode::kInvalidArgument, "KV adopt: {} positions in {} groups; this state has {}",
         n_tokens, pages.size(), groups_.size());
  const auto n_pages = static_cast<size_t>(pages_for(n_tokens, page_tokens_));
  for (size_t g = 0; g < groups_.size(); ++g) {
    const GroupInfo& gi = groups_[g];
    const std::vector<int32_t>& ids = pages[g];
    if (ids.size() != n_pages)
      fail(ErrorCode::kInvalidArgument, "KV adopt: group {} lists {} pages; {} positions need {}",
           g, ids.size(), n_tokens, n_pages);
    size_t lead = 0;
    while (lead < n_pages && ids[lead] < 0) ++lead;
    // The next query, at n_tokens, sees keys from n_tokens - window + 1.
    const int64_t seen_from =
        gi.group.window > 0 ? std::max<int64_t>(0, n_tokens - gi.group.window + 1) : 0;
    if (static_cast<int64_t>(lead) * page_tokens_ > seen_from ||
        std::find(ids.begin() + static_cast<std::ptrdiff_t>(lead), ids.end(), -1) != ids.end())
      fail(ErrorCode::kInvalidArgument,
           "KV adopt: group {} (window {}) lacks pages positions below {} need", g, gi.group.window,
           n_tokens);
    const int32_t a = quantized ? gi.quant_arena : gi.full_arena;
    for (size_t i = lead; i < n_pages; ++i)
      if (ids[i] >= pool_.n_pages(a) || pool_.ref_count(a, ids[i]) < 1)
        fail(ErrorCode::kInvalidArgument, "KV adopt: group {} page {} is not a live page of {}", g,
             ids[i], pool_.arena_name(a));
  }
}

void PagedKvState::adopt(int32_t slot, const std::vector<std::vector<int32_t>>& pages,
                         int64_t n_tokens, bool quantized, int64_t min_reusable) {
  if (seq_at(slot).used && seq_at(slot).n_tokens > 0)
    fail(ErrorCode::kInvalidArgument, "KV adopt into slot {}: it is not empty", slot);
  check_adopt(pages, n_tokens, quantized);
  Sequence& s = seq_for(slot);
  s.n_tokens = n_tokens;
  std::fill(s.n_layer.begin(), s.n_layer.end(), n_tokens);
  s.quantized = quantized;
  s.min_reusable = min_reusable;
  for (size_t g = 0; g < groups_.size(); ++g) {
    GroupState& gs = s.groups[g];
    gs.pages = pages[g];
    gs.released_below = 0;
    for (int32_t id : gs.pages) {
      if (id < 0) {
        gs.released_below += page_tokens_;
        continue;
      }
      pool_.retain(arena(s, static_cast<int>(g)), id);
    }
  }
  if (quant_.enabled() && !quantized && n_tokens > 0 && n_tokens >= quant_.quant_start) {
    try {  // a sequence that computed these positions would have converted
      convert(s);
    } catch (...) {
      free_sequence(slot);
      throw;
    }
  }
  for (auto& o : others_) o->adopt(slot, pages, n_tokens, quantized, min_reusable);
}

int32_t PagedKvState::group_arena(int g, bool quantized) const {
  const GroupInfo& gi = groups_.at(static_cast<size_t>(g));
  return quantized ? gi.quant_arena : gi.full_arena;
}

const PageLayout& PagedKvState::page_layout(int g, bool quantized) const {
  const GroupInfo& gi = groups_.at(static_cast<size_t>(g));
  return quantized ? gi.quant : gi.full;
}

// Every shard allocates alike (the same pool history in lockstep), so the ids agree.
int32_t PagedKvState::allocate_page(int32_t arena, bool zeroed) {
  const int32_t id = pool_.can_allocate(arena, 1) ? pool_.allocate_one(arena, zeroed) : -1;
  for (auto& o : others_) {
    const int32_t other = o->allocate_page(arena, zeroed);
    CAIRN_CHECK(other == id, "KV shards out of step: page {} in shard 0, {} in another", id, other);
  }
  return id;
}

void PagedKvState::retain_page(int32_t arena, int32_t page) {
  pool_.retain(arena, page);
  for (auto& o : others_) o->retain_page(arena, page);
}

void PagedKvState::release_page(int32_t arena, int32_t page) {
  pool_.release(arena, page);
  for (auto& o : others_) o->release_page(arena, page);
}

}  // namespace cairn
