// The sampling flags every generating verb shares (generate, chat; serve later).
#pragma once

#include <CLI/CLI.hpp>

#include "sample/sampler.h"

namespace cairn {

// --temperature/--temp, --top-p, --top-k, --min-p into `p` (its current values
// are the defaults shown in --help).
void add_sampling_flags(CLI::App& cmd, SamplingParams& p);

}  // namespace cairn
