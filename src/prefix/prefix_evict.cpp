// Eviction from the RAM prefix tier: least recently used first, leaves before
// their parents, never a page a sequence still references.
#include <queue>

#include "core/error.h"
#include "prefix/prefix_cache.h"

namespace cairn {

void PrefixCache::erase(Entries::iterator it, bool observe) {
  const Entry& e = it->second;
  if (observer_ && observe) observer_(e.ns, record_of(it->first, e));
  for (size_t g = 0; g < e.pages.size(); ++g)
    if (e.pages[g] >= 0) kv_.release_page(e.arenas[g], e.pages[g]);
  if (!e.parent.empty()) {
    const auto p = entries_.find(e.parent);
    CAIRN_CHECK(p != entries_.end() && p->second.n_children > 0, "prefix entry without parent");
    --p->second.n_children;
  }
  bytes_ -= e.bytes;
  entries_.erase(it);
}

bool PrefixCache::evict_lru(const std::function<bool()>& done, const PageKey& keep) {
  if (done()) return true;
  struct Item {
    uint64_t tick;
    PageKey key;
    bool operator>(const Item& o) const { return tick > o.tick; }
  };
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;  // oldest on top
  for (const auto& [key, e] : entries_)
    if (key != keep && evictable(e)) heap.push({e.tick, key});
  while (!heap.empty() && !done()) {
    const auto it = entries_.find(heap.top().key);
    heap.pop();
    const PageKey parent = it->second.parent;
    erase(it);
    ++evictions_;
    if (parent.empty() || parent == keep) continue;
    const auto p = entries_.find(parent);
    if (evictable(p->second)) heap.push({p->second.tick, parent});  // now a leaf
  }
  return done();
}

bool PrefixCache::evict_until_free(int64_t need_bytes, const PageKey& keep) {
  return evict_lru([&] { return kv_.pool().free_bytes() >= need_bytes; }, keep);
}

void PrefixCache::clear() {
  for (const auto& [key, e] : entries_)
    for (size_t g = 0; g < e.pages.size(); ++g)
      if (e.pages[g] >= 0) kv_.release_page(e.arenas[g], e.pages[g]);
  entries_.clear();
  bytes_ = 0;
}

}  // namespace cairn
