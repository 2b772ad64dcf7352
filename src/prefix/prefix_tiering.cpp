// The RAM tier's edges to slower tiers: records of evicted entries for the
// spill queue, and pages restored from the SSD tier copied into pool pages.
#include <chrono>
#include <memory>

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
  // Host pages of one shard are lent in place; else (shards, device memory) copied.
  const bool in_place = kv_.pages_in_place();
  for (size_t g = 0; g < groups.size(); ++g) {
    RecordGroup rg{groups[g].window, {}};
    if (e.pages[g] >= 0 && in_place)
      rg.bytes = {kv_.pool().data(e.arenas[g], e.pages[g]),
                  static_cast<size_t>(kv_.pool().page_bytes(e.arenas[g]))};
    r.groups.push_back(rg);
  }
  if (!in_place) gather_shards(r, e);
  return r;
}

// A sharded state's logical pages are not contiguous, and device pages are not
// host memory: the record gets its own copy of every shard's bytes, shard 0 first.
void PrefixCache::gather_shards(PageRecord& r, const Entry& e) const {
  const auto t0 = std::chrono::steady_clock::now();
  int64_t total = 0;
  for (size_t g = 0; g < r.groups.size(); ++g)
    if (e.pages[g] >= 0) total += kv_.logical_page_bytes(e.arenas[g]);
  const auto size = static_cast<size_t>(total);
  std::shared_ptr<uint8_t> buf =
      buffers_ ? buffers_(size)
               : std::shared_ptr<uint8_t>(new uint8_t[size], [](uint8_t* p) { delete[] p; });
  size_t at = 0;
  for (size_t g = 0; g < r.groups.size(); ++g) {
    if (e.pages[g] < 0) continue;
    const auto n = static_cast<size_t>(kv_.logical_page_bytes(e.arenas[g]));
    kv_.read_page(e.arenas[g], e.pages[g], {buf.get() + at, n});
    r.groups[g].bytes = {buf.get() + at, n};
    at += n;
  }
  r.owner = std::move(buf);
  reads_.bytes += total;
  reads_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
                         : static_cast<int64_t>(rg.bytes.size()) != kv_.logical_page_bytes(a))
      return false;
    arenas.push_back(a);
  }
  return true;
}

bool PrefixCache::insert_restored(const PageKey& ns, const PageRecord& r,
                                  std::vector<int32_t>* spare, bool wait) {
  std::vector<int32_t> arenas;
  if (max_bytes_ == 0 || entries_.contains(r.key) || !restored_fits(r, arenas)) return false;
  if (!r.parent.empty() && !entries_.contains(r.parent)) return false;  // no orphans
  if (spare && spare->size() != r.groups.size()) spare = nullptr;
  // Bytes of the entry, and of them pages to allocate now; in one shard's
  // bytes, as the pool counts (a record holds every shard's).
  int64_t need = 0, fresh = 0;
  for (size_t g = 0; g < r.groups.size(); ++g) {
    const int64_t bytes = r.groups[g].bytes.empty() ? 0 : kv_.pool().page_bytes(arenas[g]);
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
    if (id >= 0) kv_.write_page(arenas[g], id, bytes, wait);
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
