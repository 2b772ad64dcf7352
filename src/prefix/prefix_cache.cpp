// Lookup and attach of the RAM prefix tier (publish and eviction are in
// prefix_publish.cpp and prefix_evict.cpp).
#include "prefix/prefix_cache.h"

#include <algorithm>
#include <unordered_set>

#include "core/error.h"

namespace cairn {

PublishCursor PrefixMatch::cursor() const {
  return {static_cast<int64_t>(chain.size()), chain.empty() ? PageKey{} : chain.back()};
}

PrefixCache::PrefixCache(PagedKvState& kv, int64_t max_bytes)
    : kv_(kv), max_bytes_(std::max<int64_t>(0, max_bytes)) {}

PrefixCache::~PrefixCache() {
  clear();
}

bool PrefixCache::shared(const Entry& e) const {
  for (size_t g = 0; g < e.pages.size(); ++g)
    if (e.pages[g] >= 0 && kv_.pool().ref_count(e.arenas[g], e.pages[g]) > 1) return true;
  return false;
}

// Whether the chain's first n_pages can start a sequence: quantized pages only
// at or past the length their sequences converted at, and every sliding group
// holding the pages the query at n_pages * page_tokens sees.
bool PrefixCache::usable(const std::vector<const Entry*>& chain, size_t n_pages) const {
  const int64_t n = static_cast<int64_t>(n_pages) * kv_.page_tokens();
  if (chain[0]->quantized)
    for (size_t i = 0; i < n_pages; ++i)
      if (chain[i]->min_reusable > n) return false;
  const std::vector<LayerGroup>& groups = kv_.groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    const int32_t w = groups[g].window;
    if (w <= 0) continue;
    const auto first = static_cast<size_t>(std::max<int64_t>(0, n - w + 1) / kv_.page_tokens());
    for (size_t i = first; i < n_pages; ++i)
      if (chain[i]->pages[g] < 0) return false;
  }
  return true;
}

PrefixMatch PrefixCache::match(std::span<const int32_t> tokens, const PageKey& ns,
                               int64_t max_tokens) const {
  PrefixMatch m;
  const int64_t pt = kv_.page_tokens();
  const int64_t limit = std::min(max_tokens, static_cast<int64_t>(tokens.size())) / pt;
  std::vector<const Entry*> chain;
  PageKey parent;
  for (int64_t i = 0; i < limit; ++i) {
    const std::span<const int32_t> t =
        tokens.subspan(static_cast<size_t>(i * pt), static_cast<size_t>(pt));
    const PageKey key = page_key(ns, parent, t);
    const auto it = entries_.find(key);
    if (it == entries_.end()) break;
    const Entry& e = it->second;
    // A hash hit is a hit only when the stored page says the same thing.
    if (e.parent != parent || e.ns != ns || !std::equal(t.begin(), t.end(), e.tokens.begin()))
      break;
    if (!chain.empty() && e.quantized != chain[0]->quantized) break;  // one format per sequence
    chain.push_back(&e);
    m.chain.push_back(key);
    parent = key;
  }
  size_t n = chain.size();
  while (n > 0 && !usable(chain, n)) --n;
  m.chain.resize(n);
  m.n_tokens = static_cast<int64_t>(n) * pt;
  return m;
}

void PrefixCache::attach(int32_t slot, const PrefixMatch& m) {
  if (m.chain.empty()) return;
  const size_t n = m.chain.size();
  CAIRN_CHECK(m.n_tokens == static_cast<int64_t>(n) * kv_.page_tokens(),
              "prefix match of {} pages claims {} positions", n, m.n_tokens);
  std::vector<Entry*> es;
  for (const PageKey& key : m.chain) {
    const auto it = entries_.find(key);
    CAIRN_CHECK(it != entries_.end(), "prefix page {} of {} was evicted between match and attach",
                es.size(), n);
    es.push_back(&it->second);
  }
  const size_t n_groups = kv_.groups().size();
  std::vector<std::vector<int32_t>> pages(n_groups, std::vector<int32_t>(n, -1));
  int64_t min_reusable = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t g = 0; g < n_groups; ++g) pages[g][i] = es[i]->pages[g];
    min_reusable = std::max(min_reusable, es[i]->min_reusable);
  }
  for (std::vector<int32_t>& ids : pages) {  // a sliding group keeps its last live run
    auto hole = std::find(ids.rbegin(), ids.rend(), -1);
    std::fill(hole, ids.rend(), -1);
  }
  kv_.adopt(slot, pages, m.n_tokens, es[0]->quantized, es[0]->quantized ? min_reusable : 0);
  for (Entry* e : es) {
    e->tick = ++tick_;
    if (e->gate) kv_.add_gate(slot, e->gate);  // its bytes are still arriving
  }
}

PrefixCacheStats PrefixCache::stats() const {
  PrefixCacheStats st;
  st.n_entries = static_cast<int64_t>(entries_.size());
  st.bytes = bytes_;
  st.evictions = evictions_;
  // An entry a sequence uses pins its ancestors: they go only after it does.
  std::unordered_set<PageKey, KeyHash> pinned;
  for (const auto& [key, e] : entries_) {
    if (!in_use(e)) continue;
    for (PageKey k = key; !k.empty() && pinned.insert(k).second; k = entries_.at(k).parent) {
    }
  }
  for (const auto& [key, e] : entries_)
    if (!pinned.contains(key)) st.evictable_bytes += e.bytes;
  return st;
}

}  // namespace cairn
