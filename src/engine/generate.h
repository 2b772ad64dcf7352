// The single-sequence generation loop over the paged KV state: prefill the
// prompt in chunks, then decode one token per step until a stop id, the token
// limit or the context's end. The continuous-batching engine replaces it for
// serving; `cairn generate` and `cairn chat` use it directly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/kv_settings.h"
#include "model/model.h"
#include "sample/sampler.h"
#include "sched/request.h"

namespace cairn {

struct GenerateRequest {
  std::vector<int32_t> prompt_ids;     // [n_prompt], BOS included when the model wants one
  int32_t max_tokens = 256;            // tokens to generate at most
  SamplingParams sampling;             // temperature 0 = greedy
  std::vector<int32_t> stop_ids;       // generation ends after emitting one of these
  int32_t prefill_chunk_tokens = 512;  // prompt rows per forward step
  KvSettings kv;
};

struct GenerateResult {
  std::vector<int32_t> ids;  // generated tokens (a stop id included)
  FinishReason finish = FinishReason::kLength;
  double prefill_seconds = 0.0;
  double decode_seconds = 0.0;  // from the first sampled token to the last
};

// Called with each generated id as soon as it is sampled; return false to stop
// (the result then says kCancelled).
using TokenCallback = std::function<bool(int32_t id)>;

// Throws Error(kInvalidArgument) for an empty prompt, a prompt at or past the
// model's context length, an id outside the vocabulary or bad sampling values.
GenerateResult generate(Model& model, const GenerateRequest& request,
                        const TokenCallback& on_token);

}  // namespace cairn
