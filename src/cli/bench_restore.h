// cairn bench --ssd-restore: a long prompt's KV restored from the SSD tier
// after a restart, against computing it. Prints TTFT cold (prefill), restored
// from disk and from the RAM tier, and the restore's MB/s against the disk's
// O_DIRECT read bandwidth measured in the same run (DESIGN.md §6).
#pragma once

#include <cstdint>
#include <string>

#include "engine/engine.h"
#include "model/model.h"

namespace cairn {

struct RestoreBenchFlags {
  int64_t prompt_tokens = 4096;
  std::string dir;          // the SSD tier's folder (on the disk measured); emptied first
  int restore_threads = 4;  // reads in flight
};

void run_restore_bench(Model& model, const EngineOptions& base, const RestoreBenchFlags& f);

}  // namespace cairn
