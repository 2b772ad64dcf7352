// A request as the scheduler sees it: its tokens, how many of them have K/V in
// the paged state, and where it is in its life. Owned by the engine; the
// scheduler only reads and reorders pointers to it.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/request.h"

namespace cairn {

enum class SeqState { kWaiting, kRunning, kFinished };

struct Sequence {
  uint64_t id = 0;
  uint64_t arrival = 0;  // submission order: FIFO admission, newest preempted first
  Request request;
  uint64_t seed = 0;            // the seed sampling uses (the request's or the engine's)
  std::vector<int32_t> tokens;  // prompt, then every sampled token
  int64_t n_prompt = 0;
  // Positions [0, n_computed) have K/V in the slot. tokens[n_computed..] wait to
  // be computed: the rest of the prompt, or the one token sampled last.
  int64_t n_computed = 0;
  int64_t n_cached = 0;  // prompt positions that came from the prefix cache (usage)
  int32_t slot = -1;     // KV slot while running
  SeqState state = SeqState::kWaiting;
  bool cancelled = false;
  int64_t n_preempted = 0;

  int64_t n_generated() const { return static_cast<int64_t>(tokens.size()) - n_prompt; }
  int64_t n_pending() const { return static_cast<int64_t>(tokens.size()) - n_computed; }
};

}  // namespace cairn
