// Publishing a sequence's full pages into the RAM prefix tier.
#include <algorithm>

#include "core/error.h"
#include "prefix/prefix_cache.h"

namespace cairn {

// Caches page `page` of slot under key (its parent cached or empty); false
// when it cannot: a full-attention page is gone or the byte cap has no room.
bool PrefixCache::insert(int32_t slot, const std::vector<std::vector<int32_t>>& ids, int64_t page,
                         const PageKey& key, const PageKey& parent, const PageKey& ns,
                         std::span<const int32_t> tokens) {
  if (!parent.empty() && !entries_.contains(parent)) return false;  // no orphans
  Entry e{parent,
          ns,
          {tokens.begin(), tokens.end()},
          {},
          {},
          kv_.is_quantized(slot),
          kv_.min_reusable_tokens(slot)};
  const std::vector<LayerGroup>& groups = kv_.groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    const int32_t id =
        static_cast<size_t>(page) < ids[g].size() ? ids[g][static_cast<size_t>(page)] : -1;
    if (id < 0 && groups[g].window == 0) return false;
    e.pages.push_back(id);
    e.arenas.push_back(kv_.arena_of(slot, static_cast<int>(g)));
    if (id >= 0) e.bytes += kv_.pool().page_bytes(e.arenas.back());
  }
  if (bytes_ + e.bytes > max_bytes_ &&
      !evict_lru([&] { return bytes_ + e.bytes <= max_bytes_; }, parent))
    return false;
  for (size_t g = 0; g < e.pages.size(); ++g)
    if (e.pages[g] >= 0) kv_.retain_page(e.arenas[g], e.pages[g]);
  e.tick = ++tick_;
  if (!parent.empty()) ++entries_.at(parent).n_children;
  bytes_ += e.bytes;
  entries_.emplace(key, std::move(e));
  return true;
}

void PrefixCache::publish(int32_t slot, std::span<const int32_t> tokens, const PageKey& ns,
                          PublishCursor& cursor) {
  const int64_t pt = kv_.page_tokens(), n_tokens = kv_.n_tokens(slot);
  if (static_cast<int64_t>(tokens.size()) < n_tokens)
    fail(ErrorCode::kInvalidArgument, "prefix publish: slot {} holds {} positions, {} token ids",
         slot, n_tokens, tokens.size());
  bool inserting = max_bytes_ > 0;
  std::vector<std::vector<int32_t>> ids;
  for (size_t g = 0; g < kv_.groups().size(); ++g)
    ids.push_back(kv_.page_ids(slot, static_cast<int>(g)));
  for (int64_t i = cursor.n_pages; i < n_tokens / pt; ++i) {
    const std::span<const int32_t> t =
        tokens.subspan(static_cast<size_t>(i * pt), static_cast<size_t>(pt));
    const PageKey key = page_key(ns, cursor.last, t);
    const auto it = entries_.find(key);
    if (it != entries_.end())
      it->second.tick = ++tick_;
    else if (inserting)
      inserting = insert(slot, ids, i, key, cursor.last, ns, t);
    cursor.n_pages = i + 1;
    cursor.last = key;
  }
}

}  // namespace cairn
