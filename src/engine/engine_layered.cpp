// Restores overlapped with the prompt (docs/durability.md): a chain of SSD
// pages read layer range by layer range into pool pages (in place on the host,
// through staging slots on a GPU: restore_sink.h), which enter
// the RAM tier pending once every page's header and first layers are in; the
// request is queued then, and its forward waits per layer (LayerGate) for the
// rest. A page failing a check after that is dropped with everything under it,
// and a sequence that computed over it is cut back and computes those
// positions itself: the same tokens as if it had never been restored.
#include <algorithm>

#include "backend/device.h"
#include "engine/engine_loop.h"
#include "engine/restore_sink.h"

namespace cairn {

namespace {

// Reads of a page's range below this run well under the disk's rate (measured:
// ~100 KiB reads, 4 in flight, at 35-59% of same-shaped whole-page reads;
// ~200 KiB at 92%); up to four ranges, so the first is a quarter of the restore.
constexpr int64_t kMinPartBytes = int64_t{192} << 10;
constexpr int kMaxRanges = 4;

}  // namespace

// Layer-wise reads write a page's parts in place into a one-shard host pool,
// else through staging slots (a GPU's pages, tensor-parallel shards).
bool Engine::Loop::restores_staged() const {
  return !kv_.pages_in_place() || options_.stage_restores;
}

// One restored page's pool bytes over every group, in the tier's format.
int64_t Engine::Loop::restore_page_bytes(bool quantized) const {
  int64_t n = 0;
  for (size_t g = 0; g < kv_.groups().size(); ++g)
    n += kv_.pool().page_bytes(kv_.group_arena(static_cast<int>(g), quantized));
  return n;
}

// The request may run before every page is in unless --no-restore-overlap, or,
// for the full-precision tier of a quantizing scheme, the chain reaches the
// conversion (which reads every page at once).
bool Engine::Loop::overlaps(const Tier& t, int64_t end_tokens) const {
  const int64_t boundary = budget_.chunk_boundary();
  return options_.restore_overlap && (quantized_tier(t) || boundary <= 0 || end_tokens < boundary);
}

void Engine::Loop::begin_layered(Restore& r, std::vector<PageKey> keys, int64_t first_page,
                                 std::vector<SsdTier*> tiers) {
  r.first_page = first_page;
  if (!allocate_layered(r, keys)) return;
  if (!tiers.empty()) tiers.resize(keys.size());  // the chain as far as pages fit
  if (!r.rekey.empty()) r.rekey.resize(keys.size());
  LayeredPlan plan = layered_plan(r, std::move(keys), first_page);
  plan.tiers = std::move(tiers);
  // Device pages are stream-ordered allocations on the ops' stream (reusing
  // memory freed behind work still queued there): the copy stream writes them
  // only once that work is done.
  kv_.wait_copies();
  r.layered = std::make_shared<LayeredRestore>(*r.tier->ssd, std::move(plan), restore_waker());
  r.layered->start(*r.tier->restorer);
}

// A staged plan's sink: views of its pages, and a staging slot for each
// reader made before the reads start (no page-locking on a reader's thread).
std::shared_ptr<PartSink> Engine::Loop::restore_sink(const Restore& r) {
  const bool quantized = quantized_tier(*r.tier);
  if (!staging_)
    staging_ = std::make_shared<SlotMemory>(
        [kind = kv_.pool().device().kind](size_t n) {
          return device_backend(kind).allocate_pinned_host(n);
        },
        kPageFileAlign);
  std::vector<std::vector<std::vector<Tensor>>> views;  // [pages][groups][shards]
  for (const std::vector<int32_t>& page : r.spare) {
    auto& v = views.emplace_back();
    for (size_t g = 0; g < page.size(); ++g) {
      const int32_t arena = kv_.group_arena(static_cast<int>(g), quantized);
      std::vector<Tensor>& shards = v.emplace_back();
      for (int s = 0; s < kv_.n_shards(); ++s) {
        const PagePool& pool = kv_.shard_pool(s);
        shards.push_back(pool.view(arena, page[g], 0, {pool.page_bytes(arena)}, DType::kU8));
      }
    }
  }
  std::vector<std::shared_ptr<uint8_t>> warm;
  for (int i = 0; i < std::max(options_.restore_threads, 1); ++i)
    for (size_t g = 0; g < kv_.groups().size(); ++g)
      warm.push_back(staging_->buffer(static_cast<size_t>(
          kv_.logical_page_bytes(kv_.group_arena(static_cast<int>(g), quantized)))));
  return std::make_shared<PoolSink>(staging_, std::move(views));
}

// Pool pages for every group of every page (evicting unused cached pages for
// room); the chain is cut at the first page that does not fit. False: none did.
bool Engine::Loop::allocate_layered(Restore& r, std::vector<PageKey>& keys) {
  const bool quantized = quantized_tier(*r.tier);
  const size_t n_groups = kv_.groups().size();
  const int64_t need = restore_page_bytes(quantized);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (kv_.pool().free_bytes() < need && !(cache_ && cache_->evict_until_free(need, r.parent))) {
      keys.resize(i);
      break;
    }
    std::vector<int32_t>& page = r.spare.emplace_back(n_groups, -1);
    for (size_t g = 0; g < n_groups; ++g)
      page[g] = kv_.allocate_page(kv_.group_arena(static_cast<int>(g), quantized), false);
    if (std::find(page.begin(), page.end(), -1) != page.end()) {
      release_spare_page(r, r.spare.size() - 1);
      r.spare.pop_back();
      keys.resize(i);
      break;
    }
  }
  return !keys.empty();
}

LayeredPlan Engine::Loop::layered_plan(const Restore& r, std::vector<PageKey> keys,
                                       int64_t first_page) {
  const bool quantized = quantized_tier(*r.tier);
  const std::vector<LayerGroup>& groups = kv_.groups();
  LayeredPlan p;
  p.keys = std::move(keys);
  p.last_range_hold = std::chrono::milliseconds(options_.restore_last_range_hold_ms);
  const int n = options_.restore_layer_ranges > 0
                    ? options_.restore_layer_ranges
                    : static_cast<int>(std::clamp<int64_t>(
                          restore_page_bytes(quantized) / kMinPartBytes, 1, kMaxRanges));
  p.range_of_layer = layer_ranges(model_.config().n_layers, n);
  const size_t n_ranges = static_cast<size_t>(p.range_of_layer.back()) + 1;
  p.parts.assign(n_ranges, std::vector<std::pair<uint64_t, uint64_t>>(groups.size()));
  for (size_t g = 0; g < groups.size(); ++g) {
    const int arena = kv_.group_arena(static_cast<int>(g), quantized);
    p.windows.push_back(groups[g].window);
    p.page_bytes.push_back(static_cast<uint64_t>(kv_.logical_page_bytes(arena)));
    const PageLayout& l = kv_.page_layout(static_cast<int>(g), quantized);
    for (size_t j = 0; j < groups[g].layers.size(); ++j) {  // K then V block of each layer
      auto& [begin, end] = p.parts[static_cast<size_t>(p.range_of_layer[groups[g].layers[j]])][g];
      const uint64_t k0 = l.k_offset[j];
      const uint64_t v1 = l.v_offset[j] + l.token_bytes[j] * kv_.page_tokens();
      begin = begin == end ? k0 : std::min<uint64_t>(begin, k0);
      end = std::max<uint64_t>(end, v1);
    }
  }
  if (restores_staged()) {
    p.sink = restore_sink(r);
  } else {
    for (const std::vector<int32_t>& page : r.spare) {
      std::vector<uint8_t*>& dst = p.dst.emplace_back();
      for (size_t g = 0; g < page.size(); ++g)
        dst.push_back(kv_.page_data(kv_.group_arena(static_cast<int>(g), quantized), page[g]));
    }
  }
  p.first_position = first_page * kv_.page_tokens();
  p.page_tokens = kv_.page_tokens();
  p.quantized = quantized;
  p.n_shards = kv_.n_shards();
  return p;
}

bool Engine::Loop::poll_layered(Restore& r) {
  if (!r.queued) {
    const auto it = active_.find(r.id);
    if (it == active_.end() || it->second->finished) {  // cancelled: nothing enters the cache
      r.layered->end_chain(0);
      r.queued = true;
    } else if (r.overlap ? r.layered->headers_done() : r.layered->done()) {
      queue_layered(r, *it->second);
    }
  }
  if (!r.layered->done()) return false;  // the readers may still write into r.spare
  r.layered->release_sink();             // its views of r.spare, here on the engine thread
  const size_t good = r.layered->good_pages();
  for (size_t i = 0; i < r.inserted; ++i) {
    if (i >= good) {
      cache_->drop_pending(cache_key(r, i));  // and every page after it, under it
      break;
    }
    cache_->settle_pending(cache_key(r, i));
  }
  counts_.ssd_restored_pages += static_cast<int64_t>(std::min(good, r.inserted));
  counts_.ssd_restore_wall_seconds +=
      std::chrono::duration<double>(r.layered->done_at() - r.started).count();
  release_spare(r);  // the cache and the sequences hold their own references
  return true;
}

// Inserts the pages whose headers and first layers passed, pending, and queues
// the request: its forward waits for the rest layer by layer. (A later part
// that failed already still lets its page in: poll_layered drops it when the
// restore is over, and a sequence that attended it is cut back, as it would
// be had the failure come a moment later.)
void Engine::Loop::queue_layered(Restore& r, ActiveRequest& a) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool quantized = quantized_tier(*r.tier);
  const size_t good = r.layered->done() ? r.layered->good_pages() : r.layered->header_pages();
  for (; r.inserted < good; ++r.inserted) {
    const size_t i = r.inserted;
    const PageFileHeader& h = r.layered->header(i);
    if (!r.rekey.empty() && !holds_tokens_of(r, i, a, h)) break;
    std::vector<int32_t> pages = r.spare[i];
    for (size_t g = 0; g < pages.size(); ++g)
      if (h.groups[g].bytes == 0) pages[g] = -1;  // a sliding group's released page
    const PageKey parent = r.rekey.empty() ? h.parent : i == 0 ? r.parent : r.rekey[i - 1];
    if (!cache_->insert_pending(r.tier->ns, cache_key(r, i), parent, h.tokens, quantized,
                                h.min_reusable, pages, r.layered))
      break;
  }
  r.layered->end_chain(r.inserted);  // what is not cached is not read
  counts_.ssd_restore_copy_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.queued = true;
  a.resume.reset();
  sched_.enqueue(&a.seq);
}

// A checkpoint's page i enters the RAM tier under its prefix key (r.rekey)
// only when it holds the request's tokens at its place.
bool Engine::Loop::holds_tokens_of(const Restore& r, size_t i, const ActiveRequest& a,
                                   const PageFileHeader& h) const {
  const int64_t pt = kv_.page_tokens(), page = r.first_page + static_cast<int64_t>(i);
  const auto want = std::span<const int32_t>(a.seq.tokens)
                        .subspan(static_cast<size_t>(page * pt), static_cast<size_t>(pt));
  return std::equal(want.begin(), want.end(), h.tokens.begin(), h.tokens.end());
}

// Page i's key in the RAM tier: its file's, or for a checkpoint's its prefix key.
PageKey Engine::Loop::cache_key(const Restore& r, size_t i) const {
  return r.rekey.empty() ? r.layered->key(i) : r.rekey[i];
}

std::vector<const Sequence*> Engine::Loop::cut_back_failed(const StepPlan& plan) {
  std::vector<const Sequence*> cut;
  for (const ChunkPlan& c : plan.chunks) {
    if (c.seq->slot < 0 || !kv_.has_gates(c.seq->slot)) continue;
    // The forward waited on every layer: each gate is final now.
    int64_t from = -1;
    for (const std::shared_ptr<LayerGate>& g : kv_.take_gates(c.seq->slot)) {
      const int64_t f = g->failed_from();
      if (f >= 0 && f < c.begin) from = from < 0 ? f : std::min(from, f);
    }
    if (from < 0) continue;
    cut_back(active(c.seq), from);
    cut.push_back(c.seq);
  }
  return cut;
}

// The sequence forgets positions [position, ...): they are computed again,
// from the start when its pages cannot be cut there (a sliding window let go
// of what the shorter sequence needs, or a conversion already happened).
void Engine::Loop::cut_back(ActiveRequest& a, int64_t position) {
  Sequence& s = a.seq;
  const bool converted = kv_.is_quantized(s.slot) && position < kv_.min_reusable_tokens(s.slot);
  if (converted || !kv_.can_trim(s.slot, position)) {
    kv_.free_sequence(s.slot);
    position = 0;
  } else {
    kv_.trim(s.slot, position);
  }
  s.n_computed = position;
  s.n_cached = std::min(s.n_cached, position);
  a.cursor = {};
  a.quantized = kv_.is_quantized(s.slot);
  ++counts_.ssd_restore_cut_backs;
}

}  // namespace cairn
