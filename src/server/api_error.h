// Errors as HTTP answers: a status and OpenAI's body
//   {"error": {"message", "type", "param", "code"}}
// or, on the Anthropic routes, {"type": "error", "error": {"type", "message"}}.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

#include "core/error.h"

namespace cairn::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, const std::string& message, std::string param = "",
           std::string code = "")
      : std::runtime_error(message),
        status(status),
        type(std::move(type)),
        param(std::move(param)),
        code(std::move(code)) {}
  int status;
  std::string type;   // invalid_request_error, authentication_error, ...
  std::string param;  // the field at fault, "" when none
  std::string code;   // a stable machine-readable reason, "" when none
};

// 400 invalid_request_error naming `param` ("messages[1].role").
[[noreturn]] void bad_field(const std::string& param, const std::string& message);

// The answer for an engine or tokenizer error: kInvalidArgument → 400,
// kContextLength → 400 context_length_exceeded, kQueueFull → 429,
// kUnavailable → 503, anything else → 500.
ApiError from_engine_error(const Error& e);

// OpenAI's shape.
nlohmann::json openai_error_body(const ApiError& e);
// Anthropic's shape; its type names follow Anthropic's (rate_limit_error, overloaded_error, ...).
nlohmann::json anthropic_error_body(const ApiError& e);

// JSON text that never throws on invalid UTF-8 (replaced by U+FFFD).
std::string dump_json(const nlohmann::json& j);

}  // namespace cairn::server
