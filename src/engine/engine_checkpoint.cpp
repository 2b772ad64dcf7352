// Generation checkpoints seen from the engine (docs/checkpoints.md). Every N
// emitted tokens the engine thread copies what is not yet on disk (full KV
// pages) and enqueues one job on the checkpoint queue: its worker writes the
// pages (prompt-only pages into the prefix tier, pages holding emitted tokens
// into the checkpoint page tier), then the checkpoint file. An identical
// request finds the newest checkpoint at submit (on the caller's thread),
// replays its tokens, restores its pages like an SSD prefix and continues from
// the saved step. A finished request's final event waits until its key's
// checkpoints are durably removed; a cancelled one keeps them.
#include <algorithm>
#include <mutex>

#include "core/error.h"
#include "engine/checkpoint_key.h"
#include "engine/engine_loop.h"

namespace cairn {

// The pages a checkpoint writes, then the checkpoint itself, on the worker.
// A job not yet started when the same generation's next checkpoint is made
// hands its pages over and skips its file (the newest wins anyway), so a disk
// slower than the checkpoints keeps one waiting job per generation.
struct CheckpointJob {
  std::shared_ptr<Checkpoint> checkpoint;
  std::vector<std::pair<SsdTier*, PageRecord>> records;  // new pages, bytes owned
  SsdTier* prefix = nullptr;                             // the tiers its pages live in
  SsdTier* pages = nullptr;
  CheckpointStore* store = nullptr;
  std::mutex mu;  // guards the two flags (never held over I/O)
  bool started = false, superseded = false;

  IoStatus run() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (superseded) return {};
      started = true;
    }
    // One directory fsync per tier for all the pages (a failure is counted by
    // the tier, and the page is then missing from the list below).
    bool wrote[2] = {false, false};
    for (auto& [tier, r] : records)
      if (tier->write(r, false).ok()) wrote[tier == prefix ? 0 : 1] = true;
    records.clear();  // the copies go back to their pool now, not when the job goes
    for (SsdTier* t : {prefix, pages})
      if (wrote[t == prefix ? 0 : 1])
        if (IoStatus d = t->sync_dir(); !d.ok()) return d;
    // List only the pages on disk now, from the first: a missing one ends the chain.
    std::vector<CheckpointPage>& listed = checkpoint->pages;
    size_t n = 0;
    while (n < listed.size() &&
           (listed[n].source == PageSource::kPrefix ? prefix : pages)->touch(listed[n].key))
      ++n;
    listed.resize(n);
    return store->write(*checkpoint);
  }
  // Engine thread: when this job has not started, next takes its pages (first).
  void supersede_by(CheckpointJob& next) {
    std::lock_guard<std::mutex> lock(mu);
    if (started) return;
    superseded = true;
    next.records.insert(next.records.begin(), std::make_move_iterator(records.begin()),
                        std::make_move_iterator(records.end()));
    records.clear();
  }
};

namespace {

// A finished request's final event, pushed once its checkpoints are removed,
// or when the job is dropped unrun (the queue closed at exit): never lost.
struct HeldFinal {
  std::shared_ptr<RequestStream> stream;
  Event event;
  bool pushed = false;
  HeldFinal() = default;
  HeldFinal(const HeldFinal&) = delete;
  HeldFinal& operator=(const HeldFinal&) = delete;
  void release() {
    if (!pushed) stream->push(std::move(event));
    pushed = true;
  }
  ~HeldFinal() { release(); }
};

bool fits(const Checkpoint& c, const Request& r, int64_t context, int64_t page_tokens,
          int64_t vocab) {
  const auto n_prompt = static_cast<int64_t>(r.prompt_ids.size());
  if (c.seed_chosen != r.seed_chosen || (!r.seed_chosen && c.seed != r.seed.value_or(0)) ||
      c.n_prompt != n_prompt || c.step() >= r.max_tokens ||
      static_cast<int64_t>(c.tokens.size()) >= context || c.page_tokens != page_tokens ||
      c.has_logprobs != (r.logprobs >= 0))
    return false;
  if (!std::equal(r.prompt_ids.begin(), r.prompt_ids.end(), c.tokens.begin())) return false;
  return std::all_of(c.tokens.begin(), c.tokens.end(),
                     [&](int32_t t) { return t >= 0 && t < vocab; });
}

// Page `page` of slot as a record under key (its bytes copied into pool
// buffers: the pool's pages may change once the engine steps again); empty
// when a full-attention group lacks it. ids: the slot's page ids per group.
PageRecord page_record(const PagedKvState& kv, int32_t slot, std::span<const int32_t> tokens,
                       int64_t page, const PageKey& key, const PageKey& parent,
                       const std::vector<std::vector<int32_t>>& ids, BufferPool& copies) {
  const int64_t pt = kv.page_tokens();
  PageRecord r;
  r.key = key;
  r.parent = parent;
  const auto slice = tokens.subspan(static_cast<size_t>(page * pt), static_cast<size_t>(pt));
  r.tokens.assign(slice.begin(), slice.end());
  r.quantized = kv.is_quantized(slot);
  r.min_reusable = kv.min_reusable_tokens(slot);
  std::vector<std::vector<uint8_t>> logical(kv.groups().size());  // pages copied out
  for (size_t g = 0; g < kv.groups().size(); ++g) {
    const auto at = static_cast<size_t>(page);
    const int32_t id = at < ids[g].size() ? ids[g][at] : -1;
    const int32_t arena = kv.arena_of(slot, static_cast<int>(g));
    if (id < 0 && kv.groups()[g].window == 0) return {};
    std::span<const uint8_t> bytes;
    if (id >= 0 && !kv.pages_in_place()) {  // copied out
      logical[g].resize(static_cast<size_t>(kv.logical_page_bytes(arena)));
      kv.read_page(arena, id, logical[g]);
      bytes = logical[g];
    } else if (id >= 0) {
      bytes = {kv.pool().data(arena, id), static_cast<size_t>(kv.pool().page_bytes(arena))};
    }
    r.groups.push_back({kv.groups()[g].window, bytes});
  }
  r.own(&copies);
  return r;
}

}  // namespace

void Engine::Loop::open_checkpoints() {
  const int32_t every = options_.generation_checkpoint_tokens;
  if (every < 0)
    fail(ErrorCode::kInvalidArgument, "--generation-checkpoint: {} < 0 (0 turns it off)", every);
  if (every == 0) return;
  if (options_.ssd_cache_dir.empty())
    fail(ErrorCode::kInvalidArgument,
         "--generation-checkpoint needs a folder to write to: give --ssd-cache DIR");
  ckpt_store_ = std::make_unique<CheckpointStore>(
      options_.ssd_cache_dir, TierNamespace{options_.model_fingerprint, scheme_, kCheckpointTag});
  ckpt_queue_ = std::make_unique<SpillQueue>(options_.spill_queue_bytes);
}

std::shared_ptr<const Checkpoint> Engine::Loop::find_checkpoint(ActiveRequest& a,
                                                                const Request& r) {
  if (!ckpt_store_) return nullptr;
  a.ckpt_key = checkpoint_key(r, r.seed_chosen, options_.model_fingerprint, scheme_);
  a.ckpt_on_disk = ckpt_store_->contains(a.ckpt_key);
  if (!a.ckpt_on_disk) return nullptr;
  CheckpointRead got = ckpt_store_->find(a.ckpt_key);  // a failing file: removed and logged
  const ModelConfig& cfg = model_.config();
  if (!got.checkpoint ||
      !fits(*got.checkpoint, r, cfg.max_position_embeddings, kv_.page_tokens(), cfg.vocab_size))
    return nullptr;
  return std::make_shared<const Checkpoint>(std::move(*got.checkpoint));
}

Event Engine::Loop::replay(ActiveRequest& a) const {
  const Checkpoint& c = *a.resume;
  Sequence& s = a.seq;
  s.tokens = c.tokens;
  Event e;
  for (int64_t i = 0; i < c.step(); ++i) {
    const auto at = static_cast<size_t>(i);
    TokenOut t{
        c.tokens[static_cast<size_t>(c.n_prompt + i)], c.has_logprobs ? c.logprobs[at] : 0, {}};
    if (s.request.logprobs > 0)
      for (const SavedLogprob& x : c.top[at]) t.top.push_back({x.id, x.logprob});
    e.text += a.output->feed(t.id).text;
    e.tokens.push_back(std::move(t));
  }
  a.logprobs = c.logprobs;
  a.top = c.top;
  a.ckpt_pages = c.pages;
  a.ckpt_quantized = c.quantized;
  a.ckpt_step = c.step();
  return e;
}

void Engine::Loop::note_sampled(ActiveRequest& a, const SampleResult& sr) {
  if (!ckpt_store_ || a.seq.request.logprobs < 0) return;
  a.logprobs.push_back(sr.logprob);
  a.top.emplace_back();
  if (a.seq.request.logprobs > 0)
    for (const TokenLogprob& t : sr.top) a.top.back().push_back({t.id, t.logprob});
}

// Lists a's full pages in its checkpoint (after those earlier checkpoints
// listed), copying the ones no tier holds yet into the job, then enqueues it.
void Engine::Loop::checkpoint(ActiveRequest& a) {
  const Sequence& s = a.seq;
  auto c = std::make_shared<Checkpoint>();
  c->key = a.ckpt_key;
  c->seed = s.seed;
  c->seed_chosen = s.request.seed_chosen;
  c->n_prompt = s.n_prompt;
  c->tokens = s.tokens;
  c->page_tokens = kv_.page_tokens();
  c->quantized = s.slot >= 0 && kv_.is_quantized(s.slot);
  c->has_logprobs = s.request.logprobs >= 0;
  if (c->has_logprobs) c->logprobs = a.logprobs, c->top = a.top;
  auto job_ptr = std::make_shared<CheckpointJob>();
  CheckpointJob& job = *job_ptr;
  job.checkpoint = c;
  job.store = ckpt_store_.get();
  Tier* t = tiers_.empty() ? nullptr : tier_for(c->quantized ? ns_quant_ : ns_full_);
  if (c->quantized != a.ckpt_quantized) a.ckpt_pages.clear(), a.ckpt_quantized = c->quantized;
  if (t && t->ckpt_pages && s.slot >= 0) {
    job.prefix = t->ssd.get(), job.pages = t->ckpt_pages.get();
    list_pages(a, t->ns, job);
    c->pages = a.ckpt_pages;
  }
  int64_t bytes = static_cast<int64_t>(4 * c->tokens.size());
  for (const auto& [tier, r] : job.records) bytes += r.payload_bytes();
  if (a.last_job && a.last_job->prefix == job.prefix && a.last_job->pages == job.pages)
    a.last_job->supersede_by(job);  // same tiers: its pages fit this job's list
  a.last_job = job_ptr;
  a.ckpt_step = s.n_generated();
  a.ckpt_on_disk = true;
  ckpt_queue_->enqueue({bytes, false, [job_ptr] { return job_ptr->run(); }});
}

// Appends a's full pages past those its checkpoints listed to a.ckpt_pages:
// prompt-only pages under their prefix keys (ns), the others under the
// checkpoint page tier's; the ones no tier holds are copied into the job.
void Engine::Loop::list_pages(ActiveRequest& a, const PageKey& ns, CheckpointJob& job) {
  const Sequence& s = a.seq;
  const int64_t pt = kv_.page_tokens(), n_full = kv_.n_tokens(s.slot) / pt;
  const std::vector<PageKey> p = chain_keys(a, ns, n_full);
  const std::vector<PageKey> ck = chain_keys(a, job.pages->ns().key(), n_full);
  std::vector<std::vector<int32_t>> ids;
  for (size_t g = 0; g < kv_.groups().size(); ++g)
    ids.push_back(kv_.page_ids(s.slot, static_cast<int>(g)));
  for (auto i = static_cast<int64_t>(a.ckpt_pages.size()); i < n_full; ++i) {
    const bool prompt_only = (i + 1) * pt <= s.n_prompt;  // else it holds emitted tokens
    const std::vector<PageKey>& keys = prompt_only ? p : ck;
    const auto at = static_cast<size_t>(i);
    SsdTier* tier = prompt_only ? job.prefix : job.pages;
    if (!tier->contains(keys[at])) {
      PageRecord r = page_record(kv_, s.slot, s.tokens, i, keys[at],
                                 i == 0 ? PageKey{} : keys[at - 1], ids, ckpt_copies_);
      if (r.key.empty()) break;
      job.records.emplace_back(tier, std::move(r));
    }
    a.ckpt_pages.push_back({prompt_only ? PageSource::kPrefix : PageSource::kCheckpoint, keys[at]});
  }
}

bool Engine::Loop::begin_resume_restore(ActiveRequest& a) {
  const Checkpoint& c = *a.resume;
  Tier* t = tier_for(c.quantized ? ns_quant_ : ns_full_);
  if (!t || !t->ckpt_pages || !cache_) return false;
  const int64_t pt = kv_.page_tokens();
  const auto n_tokens = static_cast<int64_t>(a.seq.tokens.size());
  const int64_t n = std::min<int64_t>(static_cast<int64_t>(c.pages.size()), (n_tokens - 1) / pt);
  const auto have =
      static_cast<int64_t>(cache_->match(a.seq.tokens, t->ns, n_tokens - 1).chain.size());
  if (have >= n || budget_.match(a.seq).n_tokens >= n * pt) return false;  // RAM holds as much
  const std::vector<PageKey> p = chain_keys(a, t->ns, n);
  const std::vector<PageKey> ck = chain_keys(a, t->ckpt_pages->ns().key(), n);
  Restore r;
  r.id = a.seq.id;
  r.started = std::chrono::steady_clock::now();
  r.tier = t;
  r.first_page = have;
  r.parent = have > 0 ? p[static_cast<size_t>(have - 1)] : PageKey{};
  std::vector<PageKey> keys;
  std::vector<SsdTier*> tiers;
  for (auto i = static_cast<size_t>(have); i < static_cast<size_t>(n); ++i) {
    const bool prefix = c.pages[i].source == PageSource::kPrefix;
    if (c.pages[i].key != (prefix ? p[i] : ck[i])) break;  // not a page of these tokens
    keys.push_back(c.pages[i].key);
    tiers.push_back(prefix ? t->ssd.get() : t->ckpt_pages.get());
    r.rekey.push_back(p[i]);
  }
  if (keys.empty()) return false;
  r.overlap = overlaps(*t, (have + std::ssize(keys)) * pt);
  begin_layered(r, std::move(keys), have, std::move(tiers));
  if (!r.layered) return false;  // no room for a page: computed instead
  restoring_.push_back(std::move(r));
  return true;
}

void Engine::Loop::deliver_final(ActiveRequest& a, Event e) {
  const bool ended = e.finish == FinishReason::kStop || e.finish == FinishReason::kLength;
  if (!ended || !a.ckpt_on_disk || !ckpt_queue_) return a.stream->push(std::move(e));
  auto held = std::make_shared<HeldFinal>();  // built in place: a copy's destructor would push
  held->stream = a.stream;
  held->event = std::move(e);
  CheckpointStore* store = ckpt_store_.get();
  const PageKey key = a.ckpt_key;
  // After the key's checkpoint writes (the queue runs in order): once this
  // removal is durable, no crash can resume the answer the client then gets.
  const uint64_t seq = ckpt_queue_->enqueue({0, false, [held, store, key] {
                                               const IoStatus s = store->remove(key);
                                               held->release();
                                               return s;
                                             }});
  if (seq == 0) held->release();
}

// Keys of the first n full pages of a's tokens in namespace ns.
std::vector<PageKey> Engine::Loop::chain_keys(const ActiveRequest& a, const PageKey& ns,
                                              int64_t n) const {
  const int64_t pt = kv_.page_tokens();
  const std::span<const int32_t> tokens(a.seq.tokens);
  std::vector<PageKey> keys;
  PageKey last;
  for (int64_t i = 0; i < n; ++i)
    keys.push_back(
        last = page_key(ns, last,
                        tokens.subspan(static_cast<size_t>(i * pt), static_cast<size_t>(pt))));
  return keys;
}

}  // namespace cairn
