// Entries of the RAM tier whose pages a layer-wise restore is still filling
// (docs/durability.md, "Restores overlapped with the prompt"): usable at once
// by a sequence that waits on their gate layer by layer, never evicted or
// spilled while pending, settled when every byte passed its check, dropped
// with everything under them when one did not.
#include <unordered_set>

#include "core/error.h"
#include "prefix/prefix_cache.h"

namespace cairn {

bool PrefixCache::insert_pending(const PageKey& ns, const PageKey& key, const PageKey& parent,
                                 std::span<const int32_t> tokens, bool quantized,
                                 int64_t min_reusable, const std::vector<int32_t>& pages,
                                 std::shared_ptr<LayerGate> gate) {
  const std::vector<LayerGroup>& groups = kv_.groups();
  CAIRN_CHECK(pages.size() == groups.size() && gate != nullptr, "pending page of {} groups",
              pages.size());
  if (max_bytes_ == 0 || entries_.contains(key)) return false;
  if (!parent.empty() && !entries_.contains(parent)) return false;  // no orphans
  Entry e{parent, ns, {tokens.begin(), tokens.end()}, pages, {}, quantized, min_reusable};
  for (size_t g = 0; g < groups.size(); ++g) {
    e.arenas.push_back(kv_.group_arena(static_cast<int>(g), quantized));
    if (pages[g] >= 0) e.bytes += kv_.pool().page_bytes(e.arenas.back());
  }
  if (!evict_lru([&] { return bytes_ + e.bytes <= max_bytes_; }, parent)) return false;
  for (size_t g = 0; g < pages.size(); ++g)
    if (pages[g] >= 0) kv_.retain_page(e.arenas[g], pages[g]);
  e.tick = ++tick_;
  e.gate = std::move(gate);
  if (!parent.empty()) ++entries_.at(parent).n_children;
  bytes_ += e.bytes;
  entries_.emplace(key, std::move(e));
  return true;
}

void PrefixCache::settle_pending(const PageKey& key) {
  const auto it = entries_.find(key);
  if (it != entries_.end()) it->second.gate.reset();
}

void PrefixCache::drop_pending(const PageKey& key) {
  if (!entries_.contains(key)) return;
  // The subtree under key: entries whose parent is in it, until none is added.
  std::unordered_set<PageKey, KeyHash> gone{key};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [k, e] : entries_)
      if (!gone.contains(k) && gone.contains(e.parent)) grew = gone.insert(k).second;
  }
  // Leaves first: an entry goes once nothing under it is left.
  while (!gone.empty())
    for (auto k = gone.begin(); k != gone.end();) {
      const auto it = entries_.find(*k);
      if (it->second.n_children > 0) {
        ++k;
        continue;
      }
      erase(it, false);
      k = gone.erase(k);
    }
}

}  // namespace cairn
