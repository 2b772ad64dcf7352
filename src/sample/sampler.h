// Turns one row of logits into a token. The chain, in order:
//   temperature 0 → greedy (argmax, lowest id on ties); otherwise
//   logits / temperature → top-k → top-p (nucleus) → min-p → softmax → draw.
// The draw is the inverse CDF of the kept distribution (candidates sorted by
// probability, ties by id) at u = uniform_at(seed, step): a pure function of the
// logits, the parameters, the seed and the step. The arithmetic is
// backend/sample_row.h's, shared with ops::sample_rows, which runs the same
// chain (and the processors) for many rows at once, on the host or a GPU.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/ops.h"

namespace cairn {

struct SamplingParams {
  float temperature = 1.0f;  // 0 = greedy
  int32_t top_k = 0;         // 0 = off
  float top_p = 1.0f;        // 1 = off; in (0, 1]
  float min_p = 0.0f;        // 0 = off; keeps tokens with p ≥ min_p · p_max
  uint64_t seed = 0;
};

// Throws Error(kInvalidArgument) naming the parameter when one is out of range.
void validate(const SamplingParams& p);

int32_t argmax(std::span<const float> logits);

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0.0f;
};

struct SampleResult {
  int32_t id = 0;
  float logprob = 0.0f;           // of `id` under the distribution it was drawn from
  std::vector<TokenLogprob> top;  // the n_top most likely of that distribution, best first
};

// logits [vocab]; step counts the tokens this request has sampled before.
// n_top < 0: no logprobs at all (logprob 0, top empty; greedy then skips the
// log-softmax over the vocabulary).
// Logprobs are those of the distribution the token was drawn from: the
// log-softmax of the logits when greedy; else of logits / temperature over the
// candidates that top-k, top-p and min-p kept (the others are -inf).
SampleResult sample(std::span<const float> logits, const SamplingParams& p, uint64_t step,
                    int32_t n_top = 0);

int32_t sample_token(std::span<const float> logits, const SamplingParams& p, uint64_t step);

// The op's row for the chain alone (no processor lists): what sample() runs, and
// what sample_row_args (row_args.h) adds a request's processors to.
ops::SampleRow chain_row(const SamplingParams& p, uint64_t step, int32_t n_top);

}  // namespace cairn
