// The RAM tier of the prefix cache: an index from page keys to pages of the
// paged KV state, shared with running sequences by reference count. The cache
// holds one reference on each page it names; a page only it references is
// evictable, least recently used first, under a byte cap
// (--prefix-cache-bytes) and whenever the pool needs room for running work.
// Hits are verified against the token ids stored with each entry.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/paged_kv.h"
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
  int64_t n_entries = 0;     // cached pages (chain links)
  int64_t bytes = 0;         // page bytes the cache references
  int64_t evictable_bytes = 0;
  int64_t evictions = 0;
};

class PrefixCache {
 public:
  // max_bytes 0 turns the cache off (match finds nothing, publish keeps nothing).
  PrefixCache(PagedKvState& kv, int64_t max_bytes);
  ~PrefixCache();  // releases every reference it holds

  // Plan: the longest chain of cached pages, in namespace ns, whose tokens equal
  // tokens' first pages, ending at or before max_tokens, and usable as a start
  // (every sliding group holds the pages the next position's window needs).
  // Never mutates.
  PrefixMatch match(std::span<const int32_t> tokens, const PageKey& ns, int64_t max_tokens) const;
  // Apply: empty slot gets m's pages (retained) as its first m.n_tokens
  // positions, quantized or not as the entries were stored; marks them used.
  void attach(int32_t slot, const PrefixMatch& m);

  // Names slot's full pages past cursor (tokens: the slot's ids, [≥ its n_tokens])
  // under ns, inserting those not yet cached (retaining their pages) while the
  // byte cap allows, evicting older unreferenced entries to make room. Advances
  // cursor over every full page, cached or not.
  void publish(int32_t slot, std::span<const int32_t> tokens, const PageKey& ns,
               PublishCursor& cursor);

  // Frees unreferenced entries, least recently used first (leaves before their
  // parents), until the pool has need_bytes free; false when it cannot.
  bool evict_until_free(int64_t need_bytes);
  // Drops every entry (references held by sequences stay).
  void clear();
  PrefixCacheStats stats() const;

 private:
  struct Entry;
  // … implementation state
};

}  // namespace cairn
