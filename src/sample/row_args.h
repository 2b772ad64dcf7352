// One request's row of ops::sample_rows (backend/ops.h): its sampling
// parameters, and its processors' inputs as compact lists built from the
// sequence's tokens. apply_processors uses the same lists, so the host path
// and the device path edit a row alike.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/ops.h"
#include "sample/logits_processors.h"
#include "sample/sampler.h"

namespace cairn {

struct ProcessorLists {
  std::vector<ops::LogitBias> bias;   // logit_bias, in its order
  std::vector<int32_t> penalized;     // distinct ids of the repetition window (penalty ≠ 1)
  std::vector<ops::IdCount> counted;  // distinct generated ids, counted (a penalty ≠ 0)
  std::vector<int32_t> masked;        // the EOS ids while fewer than min_tokens are generated
};

// prompt: the request's prompt ids; generated: the ids sampled so far.
ProcessorLists processor_lists(const ProcessorParams& p, std::span<const int32_t> prompt,
                               std::span<const int32_t> generated);

// The op's row: `s` (with its seed) at `step` (tokens sampled before) with n_top
// (< 0: no logprobs), p's penalties and the lists, which must outlive the row.
ops::SampleRow sample_row_args(const SamplingParams& s, uint64_t step, int32_t n_top,
                               const ProcessorParams& p, const ProcessorLists& lists);

}  // namespace cairn
