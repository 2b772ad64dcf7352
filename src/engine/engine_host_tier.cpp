// The host-RAM tier seen from the engine thread (docs/kv.md, "Tiers"): pages
// the pool's prefix tier evicts go to host memory (page-locked on a GPU, read
// there straight from device memory), the host tier's own evictions go on to
// the SSD tier's spill queue, and a new request's prefix that continues in
// host memory is copied back into the pool before it is scheduled (before any
// SSD restore, which continues from where those pages end).
#include <chrono>

#include "backend/device.h"
#include "engine/engine_loop.h"

namespace cairn {

void Engine::Loop::open_host_tier() {
  if (options_.host_cache_bytes <= 0 || !cache_) return;
  const DeviceKind kind = kv_.pool().device().kind;
  host_ = std::make_unique<HostTier>(options_.host_cache_bytes, [kind](size_t n) {
    return device_backend(kind).allocate_pinned_host(n);
  });
  // Off the host, evicted pages are read straight into the tier's memory.
  if (!kv_.pages_in_place())
    cache_->set_record_buffers([h = host_.get()](size_t n) { return h->buffer(n); });
}

// Pool → host → SSD; without a host tier, pool → SSD. Called once the tiers exist.
void Engine::Loop::route_evictions() {
  if (!cache_) return;
  auto to_ssd = [this](const PageKey& ns, const PageRecord& r) {
    if (Tier* t = spill_ ? tier_for(ns) : nullptr) spill_->enqueue_page(*t->ssd, r);  // copies
  };
  if (!host_) {
    if (spill_) cache_->set_evict_observer(to_ssd);
    return;
  }
  host_->set_evict_observer(to_ssd);
  const bool in_place = kv_.pages_in_place();  // spans into pool pages about to be freed
  cache_->set_evict_observer([this, in_place](const PageKey& ns, const PageRecord& r) {
    const auto t0 = std::chrono::steady_clock::now();
    counts_.host_write_bytes += r.payload_bytes();
    if (in_place)
      host_->put(ns, r);
    else
      host_->adopt(ns, r);  // already in the tier's memory (set_record_buffers)
    host_put_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
}

// Time spent moving evicted pages into the host tier: reading device pages
// out (PrefixCache::record_reads) and keeping the records (the observer above).
double Engine::Loop::host_write_seconds() const {
  return cache_->record_reads().seconds + host_put_seconds_;
}

void Engine::Loop::restore_from_host(ActiveRequest& a) {
  if (!host_ || a.resume) return;
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t page = kv_.page_tokens();
  const int64_t max_pages = (static_cast<int64_t>(a.seq.tokens.size()) - 1) / page;
  const PrefixMatch ram = budget_.match(a.seq);
  const int64_t have = ram.n_tokens / page;
  if (have >= max_pages) return;
  const PageKey parent = ram.chain.empty() ? PageKey{} : ram.chain.back();
  const std::span<const int32_t> rest =
      std::span<const int32_t>(a.seq.tokens).subspan(static_cast<size_t>(have * page));
  PageKey ns = ns_full_;
  std::vector<PageKey> keys = host_->match_chain(ns, parent, rest, page, max_pages - have);
  if (ns_quant_ != ns_full_) {
    std::vector<PageKey> q = host_->match_chain(ns_quant_, parent, rest, page, max_pages - have);
    if (q.size() > keys.size()) keys = std::move(q), ns = ns_quant_;
  }
  if (keys.empty()) return;
  std::vector<PageRecord> held;
  for (const PageKey& k : keys) held.push_back(*host_->take(k));
  // Copies issued one after another without waiting; the records' bytes stay
  // until the one wait below.
  // Room is made by evicting other entries into this tier, within this time
  // (their reads also wait for the copies issued before them).
  const int64_t evicted_before = counts_.host_write_bytes;
  size_t n = 0;
  while (n < held.size() && cache_->insert_restored(ns, held[n], nullptr, false)) ++n;
  kv_.wait_copies();
  counts_.host_restore_evicted_bytes += counts_.host_write_bytes - evicted_before;
  int64_t bytes = 0;
  for (size_t i = 0; i < n; ++i) bytes += held[i].payload_bytes();
  for (size_t i = n; i < held.size(); ++i) host_->adopt(ns, std::move(held[i]));  // did not fit
  counts_.host_restored_pages += static_cast<int64_t>(n);
  counts_.host_restore_bytes += bytes;
  counts_.host_restore_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Engine::Loop::fill_host_stats(EngineStats& s) const {
  if (!host_) return;
  const HostTierStats h = host_->stats();
  s.host_cache_pages = h.pages;
  s.host_cache_bytes = h.bytes;
  s.host_cache_evictions = h.evictions;
  s.host_cache_memory_bytes = h.memory_bytes;
  s.host_write_seconds = host_write_seconds();
}

}  // namespace cairn
