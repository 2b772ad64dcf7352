// cairn bench --host-restore: a long prompt's KV evicted from the pool's prefix
// tier into the host-RAM tier and copied back (the other of two prompts
// crowding it out each round). Prints TTFT cold (prefill), from the host tier
// and from the pool's tier, and the copy-back rate against host → device
// copies of page-locked memory measured in the same run (DESIGN.md §6).
#pragma once

#include <cstdint>

#include "engine/engine.h"
#include "model/model.h"

namespace cairn {

void run_host_restore_bench(Model& model, const EngineOptions& base, int64_t prompt_tokens);

}  // namespace cairn
