// The fields the generation routes share: sampling, penalties, stop, seed,
// max_tokens, and the prompt-length check.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>

#include "server/parsed_request.h"

namespace cairn::server {

// temperature, top_p, top_k, min_p, seed, logit_bias, presence_penalty,
// frequency_penalty, repetition_penalty, min_tokens into r.
void read_sampling(const nlohmann::json& body, const ParseContext& ctx, Request& r);

// `stop` (OpenAI: a string or a list) or `stop_sequences` (Anthropic: a list).
void read_stop(const nlohmann::json& body, const std::string& name, Request& r);

// r.max_tokens from the first present of `names` ("max_completion_tokens",
// "max_tokens"); when none, `default_tokens` (< 0: required; 0: what the context
// leaves after the prompt), capped by the context. Needs r.prompt_ids; throws
// 400 context_length_exceeded naming `prompt_param` or the field.
void read_max_tokens(const nlohmann::json& body, std::initializer_list<const char*> names,
                     int64_t default_tokens, const ParseContext& ctx,
                     const std::string& prompt_param, Request& r);

// `n` must be 1 when given.
void check_single_choice(const nlohmann::json& body);

}  // namespace cairn::server
