// Response bodies and stream chunks in OpenAI's and Anthropic's shapes.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/request.h"
#include "server/parsed_request.h"
#include "tokenizer/tokenizer.h"

namespace cairn::server {

using nlohmann::json;

// What every answer to one request repeats.
struct ResponseMeta {
  std::string id;                  // chatcmpl-…, cmpl-…, msg_…
  std::string model;               // the served model name
  int64_t created = 0;             // unix seconds
  std::string system_fingerprint;  // names the weights and the build
  int64_t seed = 0;  // the seed the (first) request samples with, as the client gave it
};

// "chatcmpl-", "cmpl-" or "msg_" and 24 random hex digits.
std::string new_response_id(Api api);

// "stop", "length"; a cancelled request reads "stop", an error "error".
const char* openai_finish(FinishReason r);
// "end_turn", "max_tokens", "stop_sequence".
const char* anthropic_stop_reason(const Event& final_event);

json usage_json(const Usage& u);
Usage add_usage(const Usage& a, const Usage& b);

// {"content": [{token, logprob, bytes, top_logprobs: [...]}]}
json chat_logprobs(const std::vector<TokenOut>& tokens, const tok::Tokenizer& tok);
// {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}; offsets from `offset`.
json completion_logprobs(const std::vector<TokenOut>& tokens, const tok::Tokenizer& tok,
                         int64_t offset);

// Whole answers; `results[i]` is the merged event of requests[i].
json chat_response(const ResponseMeta& m, const ParsedRequest& p, const std::vector<Event>& results,
                   const tok::Tokenizer& tok);
json completion_response(const ResponseMeta& m, const ParsedRequest& p,
                         const std::vector<Event>& results, const tok::Tokenizer& tok);
json messages_response(const ResponseMeta& m, const ParsedRequest& p, const Event& result);

// One chat.completion.chunk: `delta` as given, logprobs and finish_reason null when absent.
json chat_chunk(const ResponseMeta& m, int index, json delta, json logprobs,
                std::optional<std::string> finish);
json completion_chunk(const ResponseMeta& m, int index, const std::string& text, json logprobs,
                      std::optional<std::string> finish);
// The last chunk of a stream with stream_options.include_usage: no choices, the usage.
json usage_chunk(const ResponseMeta& m, Api api, const Usage& u);

// SSE framing: "data: <json>\n\n", "data: [DONE]\n\n", "event: <name>\ndata: <json>\n\n".
std::string sse_data(const json& j);
std::string sse_done();
std::string sse_event(const std::string& name, const json& j);

}  // namespace cairn::server
