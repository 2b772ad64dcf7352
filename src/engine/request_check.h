// Validation of a Request at Engine::submit, before anything is queued.
#pragma once

#include <cstdint>

#include "model/config.h"
#include "sched/request.h"

namespace cairn {

// Throws Error naming the field: kInvalidArgument for an empty prompt,
// max_tokens < 1, ids outside the vocabulary, sampling or processor values out
// of range, logprobs outside [-1, 20], stop strings without a tokenizer;
// kContextLength for a prompt that fills the context or whose KV alone exceeds
// the budget (prompt_bytes: the bytes its positions would take; budget_bytes).
void check_request(const ModelConfig& cfg, const Request& r, bool has_tokenizer,
                   int64_t prompt_bytes, int64_t budget_bytes);

}  // namespace cairn
