// What a caller asks the engine for, and what it gets back. A Request is
// validated whole at Engine::submit; an Event stream answers it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sample/logits_processors.h"
#include "sample/sampler.h"

namespace cairn {

enum class FinishReason { kStop, kLength, kCancelled, kError };
// "stop", "length", "cancelled", "error".
const char* finish_reason_name(FinishReason r);

struct Request {
  std::vector<int32_t> prompt_ids;  // [n_prompt] ≥ 1, BOS included when the model wants one
  int32_t max_tokens = 256;         // ≥ 1; also capped by the context's end
  SamplingParams sampling;          // sampling.seed is ignored: see `seed`
  std::optional<uint64_t> seed;     // none: the engine chooses one and reports it
  // The seed was chosen for the caller, not sent (the server picks one below
  // 2^53): a generation checkpoint's key then says "server-chosen", and a
  // resumed request samples with the seed its checkpoint saved.
  bool seed_chosen = false;
  // logit_bias, penalties, min_tokens. eos_ids is filled by the engine from stop_ids.
  ProcessorParams processors;
  std::vector<int32_t> stop_ids;          // generation ends after emitting one (EOS ids, …)
  std::vector<std::string> stop_strings;  // ends when the text contains one (not emitted)
  int32_t logprobs = -1;                  // -1 none; 0..20: the token's logprob + this many top
  bool skip_special = true;               // text deltas leave special tokens out
};

// One emitted token, with its logprobs when the request asked for them.
struct TokenOut {
  int32_t id = 0;
  float logprob = 0.0f;           // of the distribution it was drawn from
  std::vector<TokenLogprob> top;  // [request.logprobs], best first
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  // prompt tokens whose KV came from the prefix cache
};

// Delivered in order on a RequestStream. Every stream ends with exactly one
// event whose `finished` is true.
struct Event {
  std::vector<TokenOut> tokens;  // new tokens since the last event
  std::string text;              // their UTF-8 text (stop strings held back); "" without tokenizer
  bool finished = false;
  FinishReason finish = FinishReason::kLength;  // when finished
  std::string error;                            // when finish == kError
  int32_t stop_index = -1;                      // which stop string ended it, or -1
  Usage usage;                                  // when finished
};

}  // namespace cairn
