// The RAM tier's edges to slower tiers: records of evicted entries for the
// spill queue, and pages restored from the SSD tier copied into pool pages.
#include <cstring>

#include "core/error.h"
#include "prefix/prefix_cache.h"

namespace cairn {

PageRecord PrefixCache::record_of(const PageKey& key, const Entry& e) const {
  PageRecord r;
  r.key = key;
  r.parent = e.parent;
  r.tokens = e.tokens;
  r.quantized = e.quantized;
  r.min_reusable = e.min_reusable;
  const std::vector<LayerGroup>& groups = kv_.groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    RecordGroup rg{groups[g].window, {}};
    if (e.pages[g] >= 0)
      rg.bytes = {kv_.pool().data(e.arenas[g], e.pages[g]),
                  static_cast<size_t>(kv_.pool().page_bytes(e.arenas[g]))};
    r.groups.push_back(rg);
  }
  return r;
}

// Whether r's groups fit this state's layout; fills the arena of each group.
bool PrefixCache::restored_fits(const PageRecord& r, std::vector<int32_t>& arenas) const {
  const std::vector<LayerGroup>& groups = kv_.groups();
  if (r.groups.size() != groups.size() ||
      static_cast<int64_t>(r.tokens.size()) != kv_.page_tokens())
    return false;
  for (size_t g = 0; g < groups.size(); ++g) {
    const int32_t a = kv_.group_arena(static_cast<int>(g), r.quantized);
    const RecordGroup& rg = r.groups[g];
    if (rg.window != groups[g].window) return false;
    if (rg.bytes.empty() ? groups[g].window == 0
                         : static_cast<int64_t>(rg.bytes.size()) != kv_.pool().page_bytes(a))
      return false;
    arenas.push_back(a);
  }
  return true;
}

bool PrefixCache::insert_restored(const PageKey& ns, const PageRecord& r,
                                  std::vector<int32_t>* spare) {
  std::vector<int32_t> arenas;
  if (max_bytes_ == 0 || entries_.contains(r.key) || !restored_fits(r, arenas)) return false;
  if (!r.parent.empty() && !entries_.contains(r.parent)) return false;  // no orphans
  if (spare && spare->size() != r.groups.size()) spare = nullptr;
  int64_t need = 0, fresh = 0;  // bytes of the entry; of them, pages to allocate now
  for (size_t g = 0; g < r.groups.size(); ++g) {
    const auto bytes = static_cast<int64_t>(r.groups[g].bytes.size());
    need += bytes;
    if (bytes > 0 && (!spare || (*spare)[g] < 0)) fresh += bytes;
  }
  if (!evict_lru([&] { return bytes_ + need <= max_bytes_; }, r.parent) ||
      !evict_lru([&] { return kv_.pool().free_bytes() >= fresh; }, r.parent))
    return false;
  Entry e{r.parent, ns, r.tokens, {}, arenas, r.quantized, r.min_reusable, need, ++tick_, 0};
  for (size_t g = 0; g < r.groups.size(); ++g) {
    const std::span<const uint8_t> bytes = r.groups[g].bytes;
    int32_t id = -1;
    if (!bytes.empty() && spare && (*spare)[g] >= 0) std::swap(id, (*spare)[g]);
    if (!bytes.empty() && id < 0) id = kv_.allocate_page(arenas[g]);
    CAIRN_CHECK(bytes.empty() || id >= 0, "pool has {} free bytes after eviction", fresh);
    if (id >= 0) std::memcpy(kv_.page_data(arenas[g], id), bytes.data(), bytes.size());
    e.pages.push_back(id);  // the cache's reference is the allocation's
  }
  if (!r.parent.empty()) ++entries_.at(r.parent).n_children;
  bytes_ += need;
  entries_.emplace(r.key, std::move(e));
  return true;
}

void PrefixCache::evict_all() {
  evict_lru([] { return false; }, PageKey{});
}

}  // namespace cairn
