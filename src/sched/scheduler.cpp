#include "sched/scheduler.h"

#include <algorithm>

#include "core/error.h"

namespace cairn {

// What is left of the step while it is planned.
struct Scheduler::Tally {
  int64_t token_room = 0;
  int64_t bytes_room = 0;
  int64_t n_running = 0;  // running and not preempted
};

namespace {

bool contains(const std::vector<Sequence*>& v, const Sequence* s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

Scheduler::Scheduler(SchedulerOptions o) : options_(o) {
  if (o.max_seqs < 1) fail(ErrorCode::kInvalidArgument, "max_seqs must be ≥ 1, got {}", o.max_seqs);
  if (o.max_batch_tokens < o.max_seqs)
    fail(ErrorCode::kInvalidArgument, "max_batch_tokens ({}) must be ≥ max_seqs ({})",
         o.max_batch_tokens, o.max_seqs);
  if (o.max_queue < 0)
    fail(ErrorCode::kInvalidArgument, "max_queue must be ≥ 0, got {}", o.max_queue);
  slot_used_.assign(static_cast<size_t>(o.max_seqs), false);
}

bool Scheduler::can_enqueue() const {
  return static_cast<int64_t>(waiting_.size()) < options_.max_queue;
}

void Scheduler::enqueue(Sequence* seq) {
  seq->state = SeqState::kWaiting;
  waiting_.push_back(seq);
}

void Scheduler::remove(Sequence* seq) {
  std::erase(waiting_, seq);
  std::erase(running_, seq);
  if (seq->slot >= 0) slot_used_[static_cast<size_t>(seq->slot)] = false;
  seq->slot = -1;
  seq->state = SeqState::kFinished;
}

int64_t Scheduler::chunk_end(const KvBudget& budget, const Sequence& s, int64_t begin,
                             int64_t token_room) const {
  int64_t end = begin + std::min(static_cast<int64_t>(s.tokens.size()) - begin, token_room);
  const int64_t boundary = budget.chunk_boundary();
  if (boundary > 0 && begin < boundary && end > boundary) end = boundary;
  return end;
}

int32_t Scheduler::free_slot(const StepPlan& plan) const {
  for (size_t i = 0; i < slot_used_.size(); ++i) {
    const auto slot = static_cast<int32_t>(i);
    bool taken = slot_used_[i];
    for (const Admission& a : plan.admitted) taken = taken || a.slot == slot;
    if (!taken) return slot;
  }
  return -1;
}

void Scheduler::plan_running(const KvBudget& budget, Tally& t, StepPlan& plan) const {
  for (Sequence* s : running_) {
    if (contains(plan.preempted, s)) continue;
    const int64_t begin = s->n_computed;
    const int64_t end = chunk_end(budget, *s, begin, t.token_room);
    if (end <= begin) continue;
    const int64_t need = budget.append_bytes(*s, end - begin);
    // Make room by preempting the newest running sequences (never older ones,
    // which are planned already), this one last.
    for (auto it = running_.rbegin(); need > t.bytes_room && *it != s; ++it) {
      if (contains(plan.preempted, *it)) continue;
      t.bytes_room += budget.held_bytes(**it);
      plan.preempted.push_back(*it);
      --t.n_running;
    }
    if (need > t.bytes_room) {
      if (t.n_running == 1) {
        plan.failed.push_back(s);
      } else {
        t.bytes_room += budget.held_bytes(*s);
        plan.preempted.push_back(s);
      }
      --t.n_running;
      continue;
    }
    plan.chunks.push_back({s, begin, end - begin, end == static_cast<int64_t>(s->tokens.size())});
    t.token_room -= end - begin;
    t.bytes_room -= need;
    plan.bytes += need;
    // Prompt still to come after this chunk is already promised to s.
    const int64_t rest = static_cast<int64_t>(s->tokens.size()) - end;
    if (rest > 0) t.bytes_room -= budget.fresh_bytes(rest);
  }
}

void Scheduler::plan_admissions(const KvBudget& budget, Tally& t, StepPlan& plan) const {
  for (Sequence* s : waiting_) {
    if (t.token_room <= 0 || t.n_running >= options_.max_seqs) break;
    const int32_t slot = free_slot(plan);
    if (slot < 0) break;
    const auto n_total = static_cast<int64_t>(s->tokens.size());
    const int64_t cached = budget.cached_tokens(*s);
    const int64_t reserve = std::min<int64_t>(options_.decode_reserve_tokens,
                                              std::max<int64_t>(s->request.max_tokens, 1));
    // Cached pages become pinned: they stop counting as evictable.
    const int64_t projected = budget.fresh_bytes(n_total - cached + reserve) +
                              (cached > 0 ? budget.fresh_bytes(cached) : 0);
    if (projected > t.bytes_room) break;  // FIFO: the head waits, and so do the rest
    const int64_t end = chunk_end(budget, *s, cached, t.token_room);
    plan.admitted.push_back({s, slot, cached});
    plan.chunks.push_back({s, cached, end - cached, end == n_total});
    plan.bytes += budget.fresh_bytes(end - cached);
    t.token_room -= end - cached;
    t.bytes_room -= projected;
    ++t.n_running;
  }
}

StepPlan Scheduler::plan(const KvBudget& budget) const {
  StepPlan plan;
  Tally t{options_.max_batch_tokens, budget.available_bytes(),
          static_cast<int64_t>(running_.size())};
  plan_running(budget, t, plan);
  plan_admissions(budget, t, plan);
  for (const ChunkPlan& c : plan.chunks) plan.n_tokens += c.n;
  return plan;
}

void Scheduler::commit(const StepPlan& plan) {
  for (const Admission& a : plan.admitted) {
    std::erase(waiting_, a.seq);
    a.seq->state = SeqState::kRunning;
    a.seq->slot = a.slot;
    a.seq->n_computed = a.n_cached;
    if (a.seq->n_preempted == 0) a.seq->n_cached = a.n_cached;  // usage counts the first
    slot_used_[static_cast<size_t>(a.slot)] = true;
    running_.push_back(a.seq);
  }
  for (Sequence* s : plan.failed) remove(s);
  for (Sequence* s : plan.preempted) {  // newest first: the oldest ends at the head
    std::erase(running_, s);
    slot_used_[static_cast<size_t>(s->slot)] = false;
    s->slot = -1;
    s->n_computed = 0;
    s->state = SeqState::kWaiting;
    ++s->n_preempted;
    waiting_.push_front(s);
  }
  std::stable_sort(running_.begin(), running_.end(),
                   [](const Sequence* a, const Sequence* b) { return a->arrival < b->arrival; });
  for (const ChunkPlan& c : plan.chunks) c.seq->n_computed = c.begin + c.n;
}

}  // namespace cairn
