// cairn bench --load: the in-process engine under synthetic concurrent load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/engine_flags.h"
#include "engine/engine.h"

namespace cairn {

struct LoadFlags {
  int64_t shared_prefix_tokens = 0;      // a prefix common to a fraction of prompts
  std::string prompt_tokens = "64:256";  // each prompt's own tokens: N or MIN:MAX
  std::string output_tokens = "64";      // tokens generated per request: N or MIN:MAX
  int64_t requests = 64;
  double shared_fraction = 0.0;  // of requests whose prompt starts with the shared prefix
  std::vector<int> concurrency = {1, 16};
  std::string prefix_cache = "on";  // on, off or both
};

struct LoadResult {
  double seconds = 0;
  int64_t generated = 0, prompt = 0, steps = 0;
  double ttft_p50 = 0, ttft_p99 = 0, itl_p50 = 0, itl_p99 = 0;
  int64_t prefix_queries = 0, prefix_hits = 0, prefix_hit_tokens = 0;
};

// One configuration: a fresh engine (prefix cache off when !prefix_cache; else
// warmed with the shared prefix), `concurrency` clients until f.requests ran.
LoadResult run_load(Model& model, const LoadFlags& f, int concurrency, bool prefix_cache,
                    const EngineOptions& base);

// Every configuration of f (concurrency × prefix cache), a line each, then the
// ratios: aggregate decode rate against the first concurrency, and TTFT with
// the prefix cache against without. weight_bytes: what one decode step streams.
void print_load_bench(Model& model, const LoadFlags& f, const EngineOptions& base,
                      double weight_bytes, double bandwidth_gbs);

}  // namespace cairn
