// cairn bench --ssd-restore: a long prompt's KV restored from the SSD tier
// after a restart, against computing it. Prints TTFT cold (prefill), restored
// from disk and from the RAM tier, and the restore's MB/s against the disk's
// O_DIRECT read bandwidth measured in the same run (DESIGN.md §6).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model/model.h"

namespace cairn {

struct RestoreBenchFlags {
  int64_t prompt_tokens = 4096;
  std::string dir;          // the SSD tier's folder (on the disk measured); emptied first
  int restore_threads = 4;  // reads in flight
  int layer_ranges = 0;     // a layer-wise restore's ranges (EngineOptions::restore_layer_ranges)
};

// Submits prompt for one greedy token; seconds until it arrives.
double first_token_seconds(Engine& e, const std::vector<int32_t>& prompt);
// n token ids in [3, vocab), the same for every call with the same seed (xorshift).
std::vector<int32_t> random_prompt(int64_t n, int64_t vocab, uint64_t seed = 0x2545f4914f6cdd1dull);

void run_restore_bench(Model& model, const EngineOptions& base, const RestoreBenchFlags& f);

}  // namespace cairn
