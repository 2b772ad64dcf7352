#include "sched/batch_builder.h"

namespace cairn {

ForwardBatch build_batch(const StepPlan& plan) {
  ForwardBatch b;
  b.tokens.reserve(static_cast<size_t>(plan.n_tokens));
  b.positions.reserve(static_cast<size_t>(plan.n_tokens));
  for (const ChunkPlan& c : plan.chunks) {
    b.spans.push_back({c.seq->slot, b.n_tokens(), c.n, c.sample});
    for (int64_t p = c.begin; p < c.begin + c.n; ++p) {
      b.tokens.push_back(c.seq->tokens[static_cast<size_t>(p)]);
      b.positions.push_back(static_cast<int32_t>(p));
    }
  }
  return b;
}

}  // namespace cairn
