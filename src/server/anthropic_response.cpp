// Anthropic Messages answers: the whole message and the stream's events.
#include "server/anthropic_response.h"

namespace cairn::server {

namespace {

json anthropic_usage(const Usage& u) {
  return {{"input_tokens", u.prompt_tokens},
          {"output_tokens", u.completion_tokens},
          {"cache_read_input_tokens", u.cached_tokens}};
}

json stop_sequence(const ParsedRequest& p, const Event& e) {
  const auto& stops = p.requests.front().stop_strings;
  if (e.stop_index < 0 || e.stop_index >= static_cast<int32_t>(stops.size())) return nullptr;
  return stops[static_cast<size_t>(e.stop_index)];
}

}  // namespace

json messages_response(const ResponseMeta& m, const ParsedRequest& p, const Event& e) {
  return {{"id", m.id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", m.model},
          {"content", json::array({{{"type", "text"}, {"text", e.text}}})},
          {"stop_reason", anthropic_stop_reason(e)},
          {"stop_sequence", stop_sequence(p, e)},
          {"usage", anthropic_usage(e.usage)}};
}

std::string messages_stream_start(const ResponseMeta& m, int64_t input_tokens) {
  json msg = {{"id", m.id},
              {"type", "message"},
              {"role", "assistant"},
              {"model", m.model},
              {"content", json::array()},
              {"stop_reason", nullptr},
              {"stop_sequence", nullptr},
              {"usage", {{"input_tokens", input_tokens}, {"output_tokens", 0}}}};
  json block = {{"type", "text"}, {"text", ""}};
  return sse_event("message_start", {{"type", "message_start"}, {"message", msg}}) +
         sse_event("content_block_start",
                   {{"type", "content_block_start"}, {"index", 0}, {"content_block", block}}) +
         sse_event("ping", {{"type", "ping"}});
}

std::string messages_stream_delta(const std::string& text) {
  return sse_event("content_block_delta", {{"type", "content_block_delta"},
                                           {"index", 0},
                                           {"delta", {{"type", "text_delta"}, {"text", text}}}});
}

std::string messages_stream_end(const ParsedRequest& p, const Event& final_event) {
  json delta = {{"stop_reason", anthropic_stop_reason(final_event)},
                {"stop_sequence", stop_sequence(p, final_event)}};
  return sse_event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}) +
         sse_event("message_delta", {{"type", "message_delta"},
                                     {"delta", delta},
                                     {"usage", anthropic_usage(final_event.usage)}}) +
         sse_event("message_stop", {{"type", "message_stop"}});
}

std::string messages_stream_error(const ApiError& e) {
  return sse_event("error", anthropic_error_body(e));
}

}  // namespace cairn::server
