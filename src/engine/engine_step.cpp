// One step's compute and its consequences: the forward over the ragged batch,
// sampling each sequence that reached its end (engine_sample.cpp), publishing
// full pages to the prefix cache, and finishing sequences.
#include <algorithm>

#include "backend/device.h"
#include "core/error.h"
#include "engine/engine_loop.h"
#include "model/config.h"
#include "sched/batch_builder.h"

namespace cairn {

void Engine::Loop::forward_and_sample(const StepPlan& plan) {
  const ForwardBatch batch = build_batch(plan);
  const int64_t vocab = model_.config().vocab_size;
  const auto n_rows = static_cast<int64_t>(batch.logit_rows().size());
  // [rows that sample, vocab], where the model computes: on a GPU only the
  // sampled tokens come back (sample_on_device).
  const bool on_device = model_.device().kind != DeviceKind::kCpu;
  Tensor logits = on_device ? empty_on(model_.device(), {n_rows, vocab}, DType::kF32)
                            : Tensor::empty({n_rows, vocab}, DType::kF32);
  model_.forward(batch, kv_view(), logits);
  // Sequences that attended restored pages which then failed a check compute
  // those positions again: nothing of this step is theirs.
  const std::vector<const Sequence*> cut = cut_back_failed(plan);
  const auto was_cut = [&](const Sequence* s) {
    return std::find(cut.begin(), cut.end(), s) != cut.end();
  };
  // Publish first: a sequence that finishes at this step's token still leaves
  // its full pages (its prompt's, at least) to the prefix cache.
  for (const ChunkPlan& c : plan.chunks)
    if (!was_cut(c.seq)) publish(active(c.seq));
  // Logits row i samples for rows[i], unless it is null (a cut-back sequence's row).
  std::vector<ActiveRequest*> rows;
  for (const ChunkPlan& c : plan.chunks)
    if (c.sample) rows.push_back(was_cut(c.seq) ? nullptr : &active(c.seq));
  if (on_device) return sample_on_device(rows, logits);
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i])
      sample_row(*rows[i],
                 std::span<const float>(logits.data<float>() + static_cast<int64_t>(i) * vocab,
                                        static_cast<size_t>(vocab)));
}

// Names the sequence's newly full pages in the prefix cache. A sequence that
// converted to its quantized format starts over in the quantized namespace.
void Engine::Loop::publish(ActiveRequest& a) {
  if (!cache_ || a.seq.slot < 0) return;
  const bool quantized = kv_.is_quantized(a.seq.slot);
  if (quantized != a.quantized) {
    a.quantized = quantized;
    a.cursor = {};
  }
  cache_->publish(a.seq.slot, a.seq.tokens, quantized ? ns_quant_ : ns_full_, a.cursor);
}

// Ends a request: frees its pages (the cache keeps what it published), leaves
// the scheduler and pushes the final event. reap() erases it from active_
// later (finish may run while active_ is being walked).
void Engine::Loop::finish(ActiveRequest& a, FinishReason why, std::string error) {
  Sequence& s = a.seq;
  if (a.finished) return;
  a.finished = true;
  // A cancelled generation keeps where it stands: an identical request resumes it.
  if (why == FinishReason::kCancelled && ckpt_store_ && s.slot >= 0 && s.n_generated() > 0 &&
      s.n_computed + 1 == static_cast<int64_t>(s.tokens.size()) && s.n_generated() > a.ckpt_step)
    checkpoint(a);
  if (s.slot >= 0) kv_.free_sequence(s.slot);
  sched_.remove(&s);
  Event e;
  e.finished = true;
  e.finish = why;
  e.error = std::move(error);
  e.stop_index = a.stop_index;
  e.usage = {s.n_prompt, std::max<int64_t>(s.n_generated(), 0), std::min(s.n_cached, s.n_prompt)};
  deliver_final(a, std::move(e));
  ++counts_.requests_finished;
  counts_.prompt_tokens += s.n_prompt;
  std::lock_guard<std::mutex> lock(mu_);
  --n_in_flight_;
}

void Engine::Loop::fail_running(const std::string& error) {
  std::vector<ActiveRequest*> all;
  for (auto& [id, a] : active_) all.push_back(a.get());
  for (ActiveRequest* a : all)
    if (a->seq.state == SeqState::kRunning) finish(*a, FinishReason::kError, error);
  if (kv_.n_shards() == 1) return;
  // The ranks may have stopped at different layers of the failed step: put
  // the shards back in step. Should their cached pages differ too, the prefix
  // cache is dropped (its pages can no longer be trusted alike in every shard).
  try {
    kv_.resync_shards();
  } catch (const Error&) {
    if (cache_) cache_->clear();
    kv_.resync_shards();
  }
}

void Engine::Loop::reap() {
  std::erase_if(active_, [](const auto& kv) { return kv.second->finished; });
}

void Engine::Loop::update_stats() {
  const PrefixCacheStats ps = cache_ ? cache_->stats() : PrefixCacheStats{};
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t submitted = stats_.requests_submitted, rejected = stats_.requests_rejected;
  stats_ = counts_;
  stats_.requests_submitted = submitted;
  stats_.requests_rejected = rejected;
  const auto n_restoring = std::count_if(restoring_.begin(), restoring_.end(),
                                         [](const Restore& r) { return !r.queued; });
  n_waiting_ = static_cast<int64_t>(inbox_.size() + sched_.waiting().size()) + n_restoring;
  stats_.n_waiting = n_waiting_;
  stats_.n_running = static_cast<int64_t>(sched_.running().size());
  // Pages are logical (one id in every shard); bytes are summed over shards.
  stats_.kv_pages_used = kv_.pool().n_used_pages();
  stats_.kv_bytes_used = kv_.pool().used_bytes() * kv_.n_shards();
  stats_.kv_bytes_budget = kv_.pool().budget_bytes() * kv_.n_shards();
  stats_.prefix_cache_bytes = ps.bytes * kv_.n_shards();
  stats_.prefix_cache_pages = ps.n_entries;
  fill_host_stats(stats_);
}

}  // namespace cairn
