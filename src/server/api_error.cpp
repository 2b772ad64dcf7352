#include "server/api_error.h"

namespace cairn::server {

void bad_field(const std::string& param, const std::string& message) {
  throw ApiError(400, "invalid_request_error", message, param);
}

ApiError from_engine_error(const Error& e) {
  switch (e.code()) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kUnsupported:
      return ApiError(400, "invalid_request_error", e.what());
    case ErrorCode::kContextLength:
      return ApiError(400, "invalid_request_error", e.what(), "messages",
                      "context_length_exceeded");
    case ErrorCode::kQueueFull:
      return ApiError(429, "rate_limit_error", e.what(), "", "queue_full");
    case ErrorCode::kUnavailable:
      return ApiError(503, "unavailable_error", e.what(), "", "draining");
    case ErrorCode::kOutOfMemory:
      return ApiError(503, "unavailable_error", e.what(), "", "out_of_memory");
    default:
      return ApiError(500, "server_error", e.what(), "", error_code_name(e.code()));
  }
}

nlohmann::json openai_error_body(const ApiError& e) {
  nlohmann::json err = {{"message", e.what()}, {"type", e.type}};
  err["param"] = e.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.param);
  err["code"] = e.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.code);
  return {{"error", err}};
}

namespace {

std::string anthropic_type(const ApiError& e) {
  switch (e.status) {
    case 400:
    case 413:
      return e.status == 413 ? "request_too_large" : "invalid_request_error";
    case 401:
      return "authentication_error";
    case 404:
    case 405:
      return "not_found_error";
    case 429:
      return "rate_limit_error";
    case 503:
      return "overloaded_error";
    default:
      return "api_error";
  }
}

}  // namespace

nlohmann::json anthropic_error_body(const ApiError& e) {
  return {{"type", "error"}, {"error", {{"type", anthropic_type(e)}, {"message", e.what()}}}};
}

std::string dump_json(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace cairn::server
