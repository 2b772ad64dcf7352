// The ragged ForwardBatch of a StepPlan: each chunk's tokens and positions in
// plan order, one span per chunk; logits only for chunks that sample.
#pragma once

#include "model/forward_batch.h"
#include "sched/scheduler.h"

namespace cairn {

ForwardBatch build_batch(const StepPlan& plan);

}  // namespace cairn
