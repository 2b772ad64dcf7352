#include "prefix/host_tier.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "prefix/page_key.h"

namespace cairn {

namespace {

constexpr size_t kSlotAlign = 64;  // what host allocations give (page-locked ones: 4096)

}  // namespace

HostTier::HostTier(int64_t max_bytes, Allocate allocate) : max_bytes_(max_bytes) {
  CAIRN_CHECK(max_bytes > 0 && allocate, "a host tier needs a cap and an allocator");
  memory_ = std::make_unique<SlotMemory>(std::move(allocate), kSlotAlign);
}

HostTier::~HostTier() = default;

std::shared_ptr<uint8_t> HostTier::buffer(size_t n) {
  return memory_->buffer(n);
}

void HostTier::put(const PageKey& ns, const PageRecord& r) {
  PageRecord own = r;
  std::shared_ptr<uint8_t> buf = buffer(static_cast<size_t>(r.payload_bytes()));
  size_t at = 0;
  for (RecordGroup& g : own.groups) {
    if (g.bytes.empty()) continue;
    std::memcpy(buf.get() + at, g.bytes.data(), g.bytes.size());
    g.bytes = {buf.get() + at, g.bytes.size()};
    at += g.bytes.size();
  }
  own.owner = std::move(buf);
  adopt(ns, std::move(own));
}

void HostTier::adopt(const PageKey& ns, PageRecord r) {
  CAIRN_CHECK(r.owner != nullptr, "a host tier record must own its bytes");
  const int64_t bytes = r.payload_bytes();
  if (const auto it = entries_.find(r.key); it != entries_.end()) {
    bytes_ -= it->second.record.payload_bytes();
    lru_.erase(it->second.tick);
    entries_.erase(it);
  }
  if (bytes > max_bytes_) {
    ++evictions_;
    if (observer_) observer_(ns, r);
    return;
  }
  while (bytes_ + bytes > max_bytes_ && !lru_.empty()) evict_oldest();
  const uint64_t tick = ++tick_;
  lru_.emplace(tick, r.key);
  bytes_ += bytes;
  const PageKey key = r.key;
  entries_.emplace(key, Entry{ns, std::move(r), tick});
}

void HostTier::evict_oldest() {
  const auto it = entries_.find(lru_.begin()->second);
  lru_.erase(lru_.begin());
  // Out of the index before the observer runs: it may call back into put.
  Entry e = std::move(it->second);
  entries_.erase(it);
  bytes_ -= e.record.payload_bytes();
  ++evictions_;
  if (observer_) observer_(e.ns, e.record);
}

std::vector<PageKey> HostTier::match_chain(const PageKey& ns, const PageKey& parent,
                                           std::span<const int32_t> tokens, int64_t page_tokens,
                                           int64_t max_pages) const {
  std::vector<PageKey> chain;
  if (page_tokens <= 0) return chain;
  const int64_t n = std::min<int64_t>(max_pages, static_cast<int64_t>(tokens.size()) / page_tokens);
  PageKey last = parent;
  for (int64_t i = 0; i < n; ++i) {
    const std::span<const int32_t> ids =
        tokens.subspan(static_cast<size_t>(i * page_tokens), static_cast<size_t>(page_tokens));
    const PageKey prev = last;
    last = page_key(ns, prev, ids);
    const auto it = entries_.find(last);
    if (it == entries_.end() || it->second.ns != ns || it->second.record.parent != prev ||
        !std::equal(ids.begin(), ids.end(), it->second.record.tokens.begin(),
                    it->second.record.tokens.end()))
      break;
    chain.push_back(last);
  }
  return chain;
}

std::optional<PageRecord> HostTier::take(const PageKey& key) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  PageRecord r = std::move(it->second.record);
  lru_.erase(it->second.tick);
  entries_.erase(it);
  bytes_ -= r.payload_bytes();
  ++taken_;
  return r;
}

void HostTier::evict_all() {
  while (!lru_.empty()) evict_oldest();
}

HostTierStats HostTier::stats() const {
  HostTierStats s;
  s.pages = static_cast<int64_t>(entries_.size());
  s.bytes = bytes_;
  s.taken = taken_;
  s.evictions = evictions_;
  s.memory_bytes = memory_->allocated_bytes();
  return s;
}

}  // namespace cairn
