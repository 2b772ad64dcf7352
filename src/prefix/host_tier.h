// The host-RAM tier of the prefix cache, between the pool's pages and the SSD
// tier (docs/kv.md, "Tiers"). On a GPU the pool is device memory: records of
// the pages the device tier evicts are kept here, in host memory from the
// allocator given (page-locked: copies both ways run at the link's rate,
// asynchronously), least recently used first out under a byte cap, on to the
// SSD tier through the evict observer (or dropped without one). A request whose
// prefix continues here takes the records back before it is scheduled; an
// entry lives in one tier at a time. Engine thread only, except that buffers
// may be released on any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/storage.h"
#include "prefix/page_file.h"
#include "prefix/slot_memory.h"

namespace cairn {

struct HostTierStats {
  int64_t pages = 0, bytes = 0;  // held now (bytes: the records' payloads)
  int64_t taken = 0;             // records taken back (restored), over the tier's life
  int64_t evictions = 0;         // records that left for the next tier
  int64_t memory_bytes = 0;      // host memory the tier has allocated (chunks)
};

class HostTier {
 public:
  // Host memory of n bytes (DeviceBackend::allocate_pinned_host on a GPU).
  using Allocate = SlotMemory::Allocate;
  using EvictObserver = std::function<void(const PageKey& ns, const PageRecord& r)>;

  // max_bytes > 0: the records' payload bytes held at most.
  HostTier(int64_t max_bytes, Allocate allocate);
  ~HostTier();
  HostTier(const HostTier&) = delete;
  HostTier& operator=(const HostTier&) = delete;

  // n bytes of the tier's memory (carved from chunks of 32 MiB, reused once
  // released); goes back to the tier when the last reference goes. What the
  // device tier reads evicted pages into (PrefixCache::set_record_buffers).
  std::shared_ptr<uint8_t> buffer(size_t n);

  // Keeps r under ns, first evicting least recently used records for room
  // (each through the observer, while its bytes are live). put copies r's
  // bytes into the tier's memory; adopt keeps them where they are (r.owner
  // must hold them, e.g. a buffer() of this tier). A record larger than the
  // cap goes straight to the observer; one already held is replaced.
  void put(const PageKey& ns, const PageRecord& r);
  void adopt(const PageKey& ns, PageRecord r);

  // The keys of the longest chain after `parent` whose pages hold tokens' first
  // pages (verified against the stored ids), in ns, at most max_pages long.
  std::vector<PageKey> match_chain(const PageKey& ns, const PageKey& parent,
                                   std::span<const int32_t> tokens, int64_t page_tokens,
                                   int64_t max_pages) const;
  // Removes and returns the record under key; nullopt when not held.
  std::optional<PageRecord> take(const PageKey& key);
  // Every record through the observer, least recently used first (at shutdown).
  void evict_all();

  void set_evict_observer(EvictObserver observer) { observer_ = std::move(observer); }
  HostTierStats stats() const;

 private:
  struct Entry {
    PageKey ns;
    PageRecord record;
    uint64_t tick = 0;
  };
  struct KeyHash {
    size_t operator()(const PageKey& k) const { return static_cast<size_t>(k.lo ^ (k.hi << 1)); }
  };

  void evict_oldest();

  int64_t max_bytes_;
  std::unique_ptr<SlotMemory> memory_;  // chunks of 32 MiB cut into slots
  EvictObserver observer_;
  std::unordered_map<PageKey, Entry, KeyHash> entries_;
  std::map<uint64_t, PageKey> lru_;  // tick → key, oldest first
  int64_t bytes_ = 0, taken_ = 0, evictions_ = 0;
  uint64_t tick_ = 0;
};

}  // namespace cairn
