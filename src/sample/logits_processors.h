// Logits processors: in-place edits of one row of logits before sampling,
// applied in this order by apply_processors():
//   1. logit_bias           logits[id] += bias
//   2. repetition penalty   for ids in the last `window` context tokens (prompt
//                           and generated): l > 0 ? l / p : l * p
//   3. presence/frequency   for ids generated so far: l -= frequency·count + presence
//   4. min_tokens           EOS ids get -inf until min_tokens tokens were generated
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace cairn {

struct ProcessorParams {
  std::vector<std::pair<int32_t, float>> logit_bias;  // (token id, bias)
  float repetition_penalty = 1.0f;                    // 1 = off; > 0
  int32_t repetition_window = 0;                      // 0 = the whole context
  float presence_penalty = 0.0f;                      // [-2, 2] as OpenAI
  float frequency_penalty = 0.0f;                     // [-2, 2] as OpenAI
  int32_t min_tokens = 0;
  std::vector<int32_t> eos_ids;  // suppressed while fewer than min_tokens are generated
};

// Throws Error(kInvalidArgument) naming the parameter; ids must be < vocab.
void validate(const ProcessorParams& p, int32_t vocab);

// prompt: the request's prompt ids; generated: ids sampled so far.
void apply_processors(std::span<float> logits, const ProcessorParams& p,
                      std::span<const int32_t> prompt, std::span<const int32_t> generated);

}  // namespace cairn
