// The engine thread: submission, cancellation and the step loop
// (plan → apply → forward → sample → events). Sampling and publishing are in
// engine_step.cpp.
#include <algorithm>
#include <random>

#include "backend/device.h"
#include "core/error.h"
#include "engine/engine_loop.h"
#include "engine/request_check.h"
#include "model/config.h"
#include "model/tp/sharded_kv.h"

namespace cairn {
namespace {

SchedulerOptions scheduler_options(const EngineOptions& o) {
  SchedulerOptions s;
  s.max_batch_tokens = o.max_batch_tokens;
  s.max_seqs = o.max_seqs;
  s.max_queue = o.max_queue;
  s.decode_reserve_tokens = o.kv.page_tokens;
  return s;
}

int64_t n_kv_shards(const Model& m) {
  return static_cast<int64_t>(m.kv_shard_configs().size());
}

// The KV scheme's name, with the shard count of a tensor-parallel model: its
// pages hold every shard's heads, so prefix namespaces (RAM and SSD) and
// checkpoint keys at N ranks never meet those at another N.
// The KV format, the shards and the arithmetic that computes the KV (DeviceBackend::numerics):
// pages computed under another scheme would give other tokens than recomputing them, so the
// tiers never share them.
std::string scheme_of(const Model& m, const EngineOptions& o) {
  std::string name = kv_scheme_name(paged_kv_options(m.config(), o.kv, o.kv_budget_bytes));
  const int64_t n = n_kv_shards(m);
  if (n > 1) name += fmt::format("|tp{}", n);
  const std::string numerics = device_backend(m.device().kind).numerics();
  return numerics == "cpu" ? name : name + "|" + numerics;
}

// Each shard's pool gets an equal part of --kv-budget (and the prefix cache,
// which counts one shard's bytes, of its cap).
// Pages live where the model computes (host memory, or the GPU's; each tensor-parallel
// rank's shard on the rank's GPU).
PagedKvState make_kv(const Model& m, const EngineOptions& o) {
  PagedKvOptions ko = paged_kv_options(m.config(), o.kv, o.kv_budget_bytes / n_kv_shards(m));
  place_kv(m, ko);
  return PagedKvState(m.kv_shard_configs(), ko);
}

uint64_t engine_chosen_seed() {
  std::random_device rd;
  return (uint64_t{rd()} << 32) ^ rd();
}

}  // namespace

Engine::Loop::Loop(Model& model, const tok::Tokenizer* tokenizer, const EngineOptions& o)
    : model_(model),
      tokenizer_(tokenizer),
      options_(o),
      kv_(make_kv(model, o)),
      cache_(o.prefix_cache_bytes > 0
                 ? std::make_unique<PrefixCache>(kv_, o.prefix_cache_bytes / kv_.n_shards())
                 : nullptr),
      ns_full_(namespace_key(o.model_fingerprint, scheme_of(model, o) + "|full")),
      ns_quant_(kv_.quant_scheme().enabled()
                    ? namespace_key(o.model_fingerprint, scheme_of(model, o) + "|quant")
                    : ns_full_),
      budget_(kv_, cache_.get(), ns_full_, ns_quant_),
      sched_(scheduler_options(o)) {
  row_.resize(static_cast<size_t>(model.config().vocab_size));
  if (kv_.n_shards() > 1) {
    std::vector<KvView*> shards;
    for (int r = 0; r < kv_.n_shards(); ++r) shards.push_back(&kv_.shard(r));
    sharded_ = std::make_unique<tp::ShardedKvView>(std::move(shards));
  }
  stats_.kv_bytes_budget = kv_.pool().budget_bytes() * kv_.n_shards();
  scheme_ = scheme_of(model, o);
  open_host_tier();
  open_tiers(scheme_);
  route_evictions();
  open_checkpoints();
  update_stats();
  thread_ = std::thread([this] { run(); });
}

Engine::Loop::~Loop() {
  close(std::chrono::seconds(60));
}

CacheFlush Engine::Loop::close(std::chrono::milliseconds timeout) {
  if (closed_) return {false, false, 0, 0, 0, 0, "the engine is closed"};
  closed_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cancel_everything_ = true;
    admitting_ = false;
  }
  wake_.notify_all();
  thread_.join();
  return close_tiers(timeout);
}

std::shared_ptr<RequestStream> Engine::Loop::submit(Request r) {
  const ModelConfig& cfg = model_.config();
  const int64_t n = kv_.n_shards();  // bytes over every shard, as --kv-budget counts them
  const int64_t prompt_bytes = budget_.fresh_bytes(static_cast<int64_t>(r.prompt_ids.size())) * n;
  check_request(cfg, r, tokenizer_ != nullptr, prompt_bytes, kv_.pool().budget_bytes() * n);
  auto a = std::make_unique<ActiveRequest>();
  a->seq.n_prompt = static_cast<int64_t>(r.prompt_ids.size());
  a->seq.tokens = r.prompt_ids;
  if (!r.seed) r.seed_chosen = true;
  a->resume = find_checkpoint(*a, r);
  a->seq.seed =
      a->resume && r.seed_chosen ? a->resume->seed : r.seed.value_or(engine_chosen_seed());
  r.sampling.seed = a->seq.seed;
  r.processors.eos_ids = r.stop_ids;
  a->output = std::make_unique<SeqOutput>(tokenizer_, r);
  a->seq.request = std::move(r);
  Event replayed;
  if (a->resume) replayed = replay(*a);
  std::shared_ptr<RequestStream> stream;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!admitting_) fail(ErrorCode::kUnavailable, "the engine is shutting down");
    if (n_waiting_ >= options_.max_queue) {
      ++stats_.requests_rejected;
      fail(ErrorCode::kQueueFull, "{} requests are waiting (--max-queue {}); try again later",
           n_waiting_, options_.max_queue);
    }
    a->seq.id = a->seq.arrival = next_id_++;
    stream = a->stream = std::make_shared<RequestStream>(a->seq.id, a->seq.seed);
    if (a->resume) stream->push(std::move(replayed));  // before any new token
    inbox_.push_back(std::move(a));
    ++n_waiting_;
    ++n_in_flight_;
    ++stats_.requests_submitted;
  }
  wake_.notify_all();
  return stream;
}

void Engine::Loop::cancel(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancels_.push_back(id);
  }
  wake_.notify_all();
}

void Engine::Loop::cancel_all() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancel_everything_ = true;
  }
  wake_.notify_all();
}

void Engine::Loop::stop_admitting() {
  std::lock_guard<std::mutex> lock(mu_);
  admitting_ = false;
}

int64_t Engine::Loop::n_in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return n_in_flight_;
}

EngineStats Engine::Loop::stats() const {
  EngineStats s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s = stats_;
  }
  fill_tier_stats(s);  // live: the tiers' counters are thread-safe
  return s;
}

ActiveRequest& Engine::Loop::active(const Sequence* s) {
  return *active_.at(s->id);
}

// Moves new requests to the scheduler and applies cancellations. Waits while
// there is nothing to do; false once stopping and idle.
bool Engine::Loop::take_inbox() {
  std::unique_lock<std::mutex> lock(mu_);
  auto ready = [&] {
    return stopping_ || cancel_everything_ || !inbox_.empty() || !cancels_.empty() ||
           !sched_.running().empty() || !sched_.waiting().empty() || restore_settled_;
  };
  if (restoring_.empty())
    wake_.wait(lock, ready);
  else  // a settling restore page wakes the thread (restore_waker)
    wake_.wait_for(lock, std::chrono::milliseconds(50), ready);
  restore_settled_ = false;
  std::vector<uint64_t> cancels = std::move(cancels_);
  cancels_.clear();
  const bool all = cancel_everything_;
  cancel_everything_ = false;
  std::vector<ActiveRequest*> added;
  while (!inbox_.empty()) {
    std::unique_ptr<ActiveRequest> a = std::move(inbox_.front());
    inbox_.pop_front();
    if (a->resume) ++counts_.checkpoints_resumed;
    added.push_back(a.get());
    active_.emplace(a->seq.id, std::move(a));
  }
  const bool stop = stopping_;
  lock.unlock();
  // Unlocked: a restore's first pages settle while its pool pages are still being allocated,
  // and each settling page takes mu_ to wake this thread (restore_waker).
  for (ActiveRequest* a : added) {
    restore_from_host(*a);
    if (!begin_restore(*a)) sched_.enqueue(&a->seq);
  }
  for (auto& [id, a] : active_)
    if (all || std::find(cancels.begin(), cancels.end(), id) != cancels.end())
      a->seq.cancelled = true;
  std::vector<ActiveRequest*> gone;
  for (auto& [id, a] : active_)
    if (a->seq.cancelled) gone.push_back(a.get());
  for (ActiveRequest* a : gone) finish(*a, FinishReason::kCancelled);
  reap();
  update_stats();
  return !(stop && active_.empty());
}

void Engine::Loop::run() {
  while (take_inbox()) {
    poll_restores();
    if (sched_.running().empty() && sched_.waiting().empty()) continue;
    try {
      step();
    } catch (const std::exception& e) {
      fail_running(e.what());
    }
    poll_restores();  // a layer-wise restore a step waited for is over: counted before the stats
    reap();
    update_stats();
  }
}

void Engine::Loop::step() {
  const StepPlan plan = sched_.plan(budget_);
  apply_plan(plan);
  if (plan.empty()) {
    // Nothing runs and the head of the queue cannot be admitted: it never will.
    if (sched_.running().empty() && !sched_.waiting().empty())
      finish(active(sched_.waiting().front()), FinishReason::kError,
             "the KV budget cannot hold this request (--kv-budget)");
    return;
  }
  if (cache_) cache_->evict_until_free(plan.bytes);
  forward_and_sample(plan);
  ++counts_.steps;
}

// Frees preempted and failed sequences' pages, attaches admitted sequences'
// cached prefixes, then commits the plan's bookkeeping.
void Engine::Loop::apply_plan(const StepPlan& plan) {
  for (Sequence* s : plan.preempted) {
    kv_.free_sequence(s->slot);
    active(s).cursor = {};
    active(s).quantized = false;
    ++counts_.preemptions;
  }
  for (const Admission& adm : plan.admitted) attach_prefix(active(adm.seq), adm);
  std::vector<Sequence*> failed = plan.failed;
  sched_.commit(plan);
  for (Sequence* s : failed)
    finish(active(s), FinishReason::kError,
           "the KV budget cannot hold this sequence even alone (--kv-budget)");
}

void Engine::Loop::attach_prefix(ActiveRequest& a, const Admission& adm) {
  if (a.seq.n_preempted == 0) ++counts_.prefix_queries;
  if (adm.n_cached == 0) return;
  const PrefixMatch m = budget_.match(a.seq);
  CAIRN_CHECK(m.n_tokens == adm.n_cached, "prefix match moved from {} to {} tokens", adm.n_cached,
              m.n_tokens);
  cache_->attach(adm.slot, m);
  a.cursor = m.cursor();
  a.quantized = kv_.is_quantized(adm.slot);
  if (a.seq.n_preempted == 0) {
    ++counts_.prefix_hits;
    counts_.prefix_hit_tokens += m.n_tokens;
  }
  const int64_t boundary = budget_.chunk_boundary();
  if (boundary > 0 && !a.quantized && m.n_tokens >= boundary) {
    // The conversion reads every page: pages still arriving must be in first
    // (a failed one cuts the sequence back after its step, to the start).
    for (const std::shared_ptr<LayerGate>& g : kv_.gates(adm.slot)) g->wait_all();
    // What computing these positions would have done on crossing quant_start.
    kv_.quantize_now(adm.slot);
    a.quantized = true;
    a.cursor = {};
  }
}

}  // namespace cairn
