// The scheduler: which sequences run in the next step, and how many tokens of
// each. Pure CPU logic over Sequences and a KvBudget; it never touches tensors.
//
// Each step is one ragged batch under max_batch_tokens:
//   1. running sequences, oldest first: a decode token, or the next prefill
//      chunk (what is left of the token budget; never crossing the budget's
//      chunk boundary);
//   2. when a running sequence's pages do not fit, the newest running sequence
//      is preempted (its pages freed, its tokens kept; it waits at the head of
//      the queue and is recomputed later) until they do. A sequence fails for
//      lack of memory only when it runs alone;
//   3. waiting sequences, in arrival order (FIFO: the head blocks the rest),
//      while their projected KV bytes (prompt not in the prefix cache, plus
//      one page to decode into) fit and fewer than max_seqs run.
// plan() never mutates; the engine applies a StepPlan, then calls commit().
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "sched/kv_budget.h"
#include "sched/sequence.h"

namespace cairn {

struct SchedulerOptions {
  int64_t max_batch_tokens = 2048;  // ≥ max_seqs, so every running sequence can decode
  int32_t max_seqs = 64;
  int32_t max_queue = 1024;
  int64_t decode_reserve_tokens = 32;  // positions admission reserves beyond the prompt
};

struct ChunkPlan {
  Sequence* seq = nullptr;
  int64_t begin = 0;    // first position (== seq->n_computed when the step starts)
  int64_t n = 0;        // positions computed this step
  bool sample = false;  // the chunk reaches the end of seq->tokens: sample from its last row
};

struct Admission {
  Sequence* seq = nullptr;
  int32_t slot = -1;
  int64_t n_cached = 0;  // prompt positions the prefix cache supplies
};

struct StepPlan {
  std::vector<Sequence*> preempted;  // newest first; their slots are freed
  std::vector<Sequence*> failed;     // cannot fit even alone: end with an error
  std::vector<Admission> admitted;   // in arrival order
  std::vector<ChunkPlan> chunks;     // row order of the ForwardBatch
  int64_t n_tokens = 0;
  int64_t bytes = 0;  // pool bytes the step's appends take (evict to this first)
  bool empty() const { return chunks.empty(); }
};

class Scheduler {
 public:
  // Error(kInvalidArgument) for max_seqs < 1, max_batch_tokens < max_seqs or max_queue < 0.
  explicit Scheduler(SchedulerOptions options);

  const SchedulerOptions& options() const { return options_; }
  // Plan: whether a new request may wait (the queue is below max_queue).
  bool can_enqueue() const;
  // Apply: seq joins the back of the queue (the caller checks can_enqueue()
  // when it wants the cap; preempted sequences may exceed it).
  void enqueue(Sequence* seq);
  // Removes a waiting or running sequence (finished or cancelled); its slot is
  // given back. The caller frees its pages.
  void remove(Sequence* seq);

  // Plan the next step. Never mutates.
  StepPlan plan(const KvBudget& budget) const;
  // Apply the plan's bookkeeping: preempted sequences go back to the queue head
  // (n_computed 0, slot freed), failed ones leave, admitted ones run with their
  // slot and n_computed = n_cached, and each chunk advances n_computed.
  void commit(const StepPlan& plan);

  const std::deque<Sequence*>& waiting() const { return waiting_; }
  const std::vector<Sequence*>& running() const { return running_; }

 private:
  struct Tally;
  void plan_running(const KvBudget& budget, Tally& t, StepPlan& plan) const;
  void plan_admissions(const KvBudget& budget, Tally& t, StepPlan& plan) const;
  int32_t free_slot(const StepPlan& plan) const;
  int64_t chunk_end(const KvBudget& budget, const Sequence& s, int64_t begin,
                    int64_t token_room) const;

  SchedulerOptions options_;
  std::deque<Sequence*> waiting_;
  std::vector<Sequence*> running_;  // in arrival order
  std::vector<bool> slot_used_;     // [max_seqs]
};

}  // namespace cairn
