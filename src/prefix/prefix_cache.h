// The RAM tier of the prefix cache: an index from page keys to pages of the
// paged KV state, shared with running sequences by reference count. The cache
// holds one reference on each page it names; a page only it references is
// evictable, least recently used first, under a byte cap
// (--prefix-cache-bytes) and whenever the pool needs room for running work.
// Hits are verified against the token ids stored with each entry.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/paged_kv.h"
#include "prefix/page_file.h"
#include "prefix/page_key.h"

namespace cairn {

// Where a sequence's publishing stands: its first n_pages full pages are named
// and the last of them has key `last`. Owned by the caller, one per sequence.
struct PublishCursor {
  int64_t n_pages = 0;
  PageKey last;
};

// A verified chain of cached pages prefixing some tokens.
struct PrefixMatch {
  int64_t n_tokens = 0;        // n_pages * page_tokens
  std::vector<PageKey> chain;  // [n_pages] keys, first page first
  PublishCursor cursor() const;
};

struct PrefixCacheStats {
  int64_t n_entries = 0;        // cached pages (chain links)
  int64_t bytes = 0;            // page bytes the cache references
  int64_t evictable_bytes = 0;  // what eviction could free now (subtrees no sequence uses)
  int64_t evictions = 0;
};

// Evicted pages off the host (device memory, shards) read into records for a
// slower tier, over the cache's life: bytes and the time the reads took.
struct RecordReads {
  int64_t bytes = 0;
  double seconds = 0;
};

class PrefixCache {
 public:
  // max_bytes 0 turns the cache off (match finds nothing, publish keeps nothing).
  // kv must outlive the cache.
  PrefixCache(PagedKvState& kv, int64_t max_bytes);
  ~PrefixCache();  // releases every reference it holds

  // Plan: the longest chain of cached pages, in namespace ns, whose tokens equal
  // tokens' first pages, ending at or before max_tokens, and usable as a start
  // (every sliding group holds the pages the next position's window needs).
  // Never mutates.
  PrefixMatch match(std::span<const int32_t> tokens, const PageKey& ns, int64_t max_tokens) const;
  // Apply: empty slot gets m's pages (retained) as its first m.n_tokens
  // positions, quantized or not as the entries were stored; marks them used.
  // m's entries must still be cached: attach before evicting room for the rest
  // of the request (attached pages are in use, so eviction then spares them).
  void attach(int32_t slot, const PrefixMatch& m);

  // Names slot's full pages past cursor (tokens: the slot's ids, [≥ its n_tokens])
  // under ns, inserting those not yet cached (retaining their pages) while the
  // byte cap allows, evicting older unreferenced entries to make room. Advances
  // cursor over every full page, cached or not.
  void publish(int32_t slot, std::span<const int32_t> tokens, const PageKey& ns,
               PublishCursor& cursor);

  // Frees unreferenced entries, least recently used first (leaves before their
  // parents), until the pool has need_bytes free; false when it cannot. `keep`
  // (and so its ancestors) stays: a chain a restore is about to continue.
  bool evict_until_free(int64_t need_bytes, const PageKey& keep = {});
  // Drops every entry (references held by sequences stay).
  void clear();

  // Called with each entry the cache evicts, while its pages are still live
  // (the record's spans point into them; for a sharded state, into a copy of
  // every shard's bytes the record owns): the SSD tier's spill hook. ns is the
  // entry's namespace.
  using EvictObserver = std::function<void(const PageKey& ns, const PageRecord& r)>;
  void set_evict_observer(EvictObserver observer) { observer_ = std::move(observer); }
  // Where the records of pages off the host (device memory, shards) are read
  // into: n bytes, owned by the returned pointer (the host tier's page-locked
  // memory: HostTier::buffer). Unset: plain host memory.
  using RecordBuffers = std::function<std::shared_ptr<uint8_t>(size_t n)>;
  void set_record_buffers(RecordBuffers buffers) { buffers_ = std::move(buffers); }
  // Evicts every entry no sequence uses, through the observer (at shutdown).
  void evict_all();
  // Inserts a page restored from a slower tier under ns: copies r's bytes (a
  // logical page of every KV shard, PagedKvState::logical_page_bytes) into
  // new pool pages (evicting unreferenced entries for room). False, changing
  // nothing, when its parent is not cached, it is cached already, its groups or
  // page sizes do not match this state's layout, or the pool cannot hold it.
  // spare: [n_groups] pool pages allocated beforehand (by the caller, so that
  // their first touches overlapped the reads), -1 where none; the ones used
  // become the entry's and are set to -1, the caller releases the rest.
  // wait false: r's bytes must stay until kv.wait_copies() (page-locked
  // bytes then copy to a device asynchronously).
  bool insert_restored(const PageKey& ns, const PageRecord& r,
                       std::vector<int32_t>* spare = nullptr, bool wait = true);
  // Layer-wise restores (prefix_pending.cpp). Inserts a page whose bytes a
  // restore is still writing into `pages` ([n_groups] pool pages of the
  // state's arenas for `quantized`, -1 for a group the file lacks; retained):
  // matched and attached like any other entry, a sequence attaching it waits
  // on `gate` (PagedKvState::add_gate), and it is never evicted nor handed to
  // the observer until settled. False, changing nothing, when the cache is
  // off, the key is cached, its parent is not, or the byte cap cannot make room.
  bool insert_pending(const PageKey& ns, const PageKey& key, const PageKey& parent,
                      std::span<const int32_t> tokens, bool quantized, int64_t min_reusable,
                      const std::vector<int32_t>& pages, std::shared_ptr<LayerGate> gate);
  // Its bytes all arrived and passed their checks: an ordinary entry now.
  void settle_pending(const PageKey& key);
  // Its bytes failed a check: the entry and every entry under it go, without
  // the observer (nothing of them is written anywhere). Sequences holding the
  // pages keep them until they let go (the caller cuts them back).
  void drop_pending(const PageKey& key);
  PrefixCacheStats stats() const;
  RecordReads record_reads() const { return reads_; }

 private:
  // One cached page (a chain link) and what verifies and frees it.
  struct Entry {
    PageKey parent, ns;
    std::vector<int32_t> tokens;  // [page_tokens]
    std::vector<int32_t> pages;   // [n_groups]; -1: a sliding group had released it
    std::vector<int32_t> arenas;  // [n_groups]
    bool quantized = false;
    int64_t min_reusable = 0;                   // the publishing sequence's, for quantized pages
    int64_t bytes = 0;                          // of its live pages
    uint64_t tick = 0;                          // last use; larger is more recent
    int32_t n_children = 0;                     // cached entries whose parent this is
    std::shared_ptr<LayerGate> gate = nullptr;  // set while a restore still writes its pages
  };
  struct KeyHash {
    size_t operator()(const PageKey& k) const { return static_cast<size_t>(k.lo ^ (k.hi << 1)); }
  };
  using Entries = std::unordered_map<PageKey, Entry, KeyHash>;
  friend struct PrefixCacheTestAccess;

  bool usable(const std::vector<const Entry*>& chain, size_t n_pages) const;
  // Whether a sequence also references one of e's pages.
  bool shared(const Entry& e) const;
  bool in_use(const Entry& e) const { return shared(e) || e.gate != nullptr; }
  bool evictable(const Entry& e) const { return e.n_children == 0 && !in_use(e); }
  // ids: the slot's page ids per group (page_ids).
  bool insert(int32_t slot, const std::vector<std::vector<int32_t>>& ids, int64_t page,
              const PageKey& key, const PageKey& parent, const PageKey& ns,
              std::span<const int32_t> tokens);
  // observe false: the entry's bytes go nowhere (a page that failed its checks).
  void erase(Entries::iterator it, bool observe = true);
  // Evicts evictable entries other than `keep`, least recently used first,
  // until done() holds; returns done().
  bool evict_lru(const std::function<bool()>& done, const PageKey& keep);

  PageRecord record_of(const PageKey& key, const Entry& e) const;
  void gather_shards(PageRecord& r, const Entry& e) const;
  bool restored_fits(const PageRecord& r, std::vector<int32_t>& arenas) const;

  PagedKvState& kv_;
  int64_t max_bytes_;
  EvictObserver observer_;
  RecordBuffers buffers_;
  mutable RecordReads reads_;  // gather_shards is const (record_of)
  Entries entries_;
  int64_t bytes_ = 0, evictions_ = 0;
  uint64_t tick_ = 0;
};

}  // namespace cairn
