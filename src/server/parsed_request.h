// An HTTP generation request validated into engine Requests, plus what the
// answer needs (stream or not, logprobs style, usage in the stream).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sample/sampler.h"
#include "sched/request.h"
#include "server/prompt_ids.h"

namespace cairn::server {

enum class Api { kChat, kCompletion, kMessages };

// What parsing needs from the loaded model; no engine.
struct ParseContext {
  const tok::Tokenizer* tokenizer = nullptr;
  const ChatPrompter* prompter = nullptr;
  std::vector<int32_t> stop_ids;  // EOS ids: generation ends after one
  int64_t context_length = 0;     // positions the model holds (prompt + generated)
  SamplingParams sampling;        // defaults for omitted fields (generation_config.json)
  float repetition_penalty = 1.0f;
  int32_t max_prompts = 16;  // completions: prompts in one request at most
};

struct ParsedRequest {
  Api api = Api::kChat;
  std::vector<Request> requests;  // one per prompt; chat and messages always one
  std::string model;              // as the client named it ("" when omitted)
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool logprobs = false;       // the answer carries logprobs
  int32_t top_logprobs = 0;    // alternatives per token
};

// POST /v1/chat/completions. Throws ApiError 400 naming the field.
ParsedRequest parse_chat(const std::string& body, const ParseContext& ctx);
// POST /v1/completions.
ParsedRequest parse_completion(const std::string& body, const ParseContext& ctx);
// POST /v1/messages (Anthropic).
ParsedRequest parse_messages(const std::string& body, const ParseContext& ctx);

}  // namespace cairn::server
