// The Anthropic Messages stream: message_start, content_block_start, ping,
// content_block_delta…, content_block_stop, message_delta (stop_reason and
// usage), message_stop; each an SSE frame with its `event:` line.
#pragma once

#include <string>

#include "server/api_error.h"
#include "server/responses.h"

namespace cairn::server {

std::string messages_stream_start(const ResponseMeta& m, int64_t input_tokens);
std::string messages_stream_delta(const std::string& text);
std::string messages_stream_end(const ParsedRequest& p, const Event& final_event);
std::string messages_stream_error(const ApiError& e);

}  // namespace cairn::server
