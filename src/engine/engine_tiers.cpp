// The SSD tier seen from the engine thread (docs/durability.md): pages the RAM
// tiers evict go to the spill queue (a copy of their bytes; the writes happen
// on its worker; route_evictions), and a new request whose prefix continues on disk past what
// RAM holds waits, outside the scheduler, while restorer threads read and
// verify those pages; they then enter the RAM tier and the request is queued
// like any other, its prefix now a RAM hit. No disk I/O on the engine thread.
#include <algorithm>

#include "engine/engine_loop.h"

namespace cairn {

namespace {

// Folds one queue's flush into what the engine reports.
void add_flush(CacheFlush& out, const FlushResult& f) {
  out.durable = out.durable && f.durable;
  out.timed_out = out.timed_out || f.timed_out;
  out.pending_items += f.pending_items, out.pending_bytes += f.pending_bytes;
  out.dropped += f.dropped, out.failed += f.failed;
  if (!f.last_error.empty()) out.error = f.last_error;
}

std::chrono::milliseconds left_until(std::chrono::steady_clock::time_point deadline) {
  return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now()),
                  std::chrono::milliseconds(0));
}

}  // namespace

void Engine::Loop::open_tiers(const std::string& scheme) {
  if (options_.ssd_cache_dir.empty() || !cache_) return;
  const int64_t n_tiers = kv_.quant_scheme().enabled() ? 2 : 1;
  // With checkpoints on, their pages (those holding emitted tokens) take a
  // quarter of the cap in tiers of their own namespace.
  const bool ckpt = options_.generation_checkpoint_tokens > 0;
  const int64_t cap = options_.ssd_cache_max_bytes / n_tiers;
  for (int64_t i = 0; i < n_tiers; ++i) {
    const std::string format = scheme + (i == 0 ? "|full" : "|quant");
    TierNamespace ns{options_.model_fingerprint, format};
    Tier t;
    t.ns = ns.key();
    t.ssd = std::make_unique<SsdTier>(options_.ssd_cache_dir, ckpt ? cap - cap / 4 : cap,
                                      std::move(ns));
    if (ckpt)
      t.ckpt_pages = std::make_unique<SsdTier>(
          options_.ssd_cache_dir, std::max<int64_t>(cap / 4, 1),
          TierNamespace{options_.model_fingerprint, format, "checkpoint"});
    t.restorer = std::make_unique<SsdRestorer>(std::max(options_.restore_threads, 1));
    tiers_.push_back(std::move(t));
  }
  spill_ = std::make_unique<SpillQueue>(options_.spill_queue_bytes);
}

// After the engine thread stopped: every cached page goes to disk, then the
// queues drain within timeout (a dead disk cannot hold the exit).
CacheFlush Engine::Loop::close_tiers(std::chrono::milliseconds timeout) {
  // Readers go first: their settle callbacks wake this Loop, which must outlive them.
  for (Tier& t : tiers_) t.restorer.reset();
  if (!spill_ && !ckpt_queue_) return {false, false, 0, 0, 0, 0, "there is no SSD tier"};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  CacheFlush out{true, false, 0, 0, 0, 0, ""};
  if (ckpt_queue_) add_flush(out, ckpt_queue_->drain(left_until(deadline)));
  if (spill_) {
    cache_->evict_all();  // through the host tier, if any
    if (host_) host_->evict_all();
    add_flush(out, spill_->drain(left_until(deadline)));
  }
  return out;
}

Engine::Loop::Tier* Engine::Loop::tier_for(const PageKey& ns) {
  for (Tier& t : tiers_)
    if (t.ns == ns) return &t;
  return nullptr;
}

bool Engine::Loop::begin_restore(ActiveRequest& a) {
  if (tiers_.empty()) return false;
  if (a.resume && begin_resume_restore(a)) return true;
  const int64_t page = kv_.page_tokens();
  const int64_t max_pages = (static_cast<int64_t>(a.seq.tokens.size()) - 1) / page;
  const PrefixMatch ram = budget_.match(a.seq);
  const int64_t have = ram.n_tokens / page;
  if (have >= max_pages) return false;
  const PageKey parent = ram.chain.empty() ? PageKey{} : ram.chain.back();
  const std::span<const int32_t> rest =
      std::span<const int32_t>(a.seq.tokens).subspan(static_cast<size_t>(have * page));
  Restore best;
  std::vector<PageKey> best_keys;
  for (Tier& t : tiers_) {
    std::vector<PageKey> keys = t.ssd->match_chain(parent, rest, page, max_pages - have);
    if (keys.size() > best_keys.size()) {
      best_keys = std::move(keys);
      best.tier = &t;
    }
  }
  if (best_keys.empty()) return false;
  best.id = a.seq.id;
  best.parent = parent;
  best.started = std::chrono::steady_clock::now();
  const auto end = static_cast<int64_t>(have + std::ssize(best_keys)) * page;
  best.overlap = overlaps(*best.tier, end);
  begin_layered(best, std::move(best_keys), have);
  if (!best.layered) return false;  // no room for a page
  restoring_.push_back(std::move(best));
  return true;
}

void Engine::Loop::release_spare(Restore& r) {
  for (size_t i = 0; i < r.spare.size(); ++i) release_spare_page(r, i);
  r.spare.clear();
}

void Engine::Loop::release_spare_page(Restore& r, size_t i) {
  const bool quantized = quantized_tier(*r.tier);
  std::vector<int32_t>& page = r.spare[i];
  for (size_t g = 0; g < page.size(); ++g)
    if (page[g] >= 0) kv_.release_page(kv_.group_arena(static_cast<int>(g), quantized), page[g]);
  std::fill(page.begin(), page.end(), -1);
}

std::function<void()> Engine::Loop::restore_waker() {
  return [this] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      restore_settled_ = true;
    }
    wake_.notify_all();
  };
}

// Queues the requests whose restores let them run (engine_layered.cpp).
void Engine::Loop::poll_restores() {
  std::erase_if(restoring_, [&](Restore& r) { return poll_layered(r); });
}

CacheFlush Engine::Loop::flush_cache(std::chrono::milliseconds timeout) {
  if (!spill_ && !ckpt_queue_)
    return {false, false, 0, 0, 0, 0, "there is no SSD tier (--ssd-cache)"};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  CacheFlush out{true, false, 0, 0, 0, 0, ""};
  for (SpillQueue* q : {ckpt_queue_.get(), spill_.get()})
    if (q) add_flush(out, q->flush(left_until(deadline)));
  return out;
}

void Engine::Loop::fill_tier_stats(EngineStats& s) const {
  for (const Tier& t : tiers_) {
    const SsdTierStats ts = t.ssd->stats();
    s.ssd_files += ts.files;
    s.ssd_bytes += ts.bytes;
    s.ssd_corrupt += ts.corrupt;
    s.ssd_restore_bytes += ts.restore_bytes;
    s.ssd_restore_seconds += ts.restore_seconds;
  }
  if (ckpt_store_) {
    const CheckpointStoreStats cs = ckpt_store_->stats();
    s.checkpoint_files = cs.files;
    s.checkpoints_written = cs.writes;
    s.checkpoints_failed = cs.write_failures;
    s.checkpoints_corrupt = cs.corrupt;
  }
  if (!spill_) return;
  const SpillStats sp = spill_->stats();
  s.spill_pending_items = sp.pending_items;
  s.spill_pending_bytes = sp.pending_bytes;
  s.spill_written = sp.written;
  s.spill_dropped = sp.dropped;
  s.spill_failed = sp.failed;
}

}  // namespace cairn
