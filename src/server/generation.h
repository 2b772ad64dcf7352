// Running a parsed request on the engine: submission, timing for /metrics, and
// the answer whole or as a stream of SSE frames.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/api_error.h"
#include "server/metrics.h"
#include "server/parsed_request.h"
#include "server/responses.h"

namespace cairn::server {

// A submitted request's stream that records TTFT, inter-token and end-to-end
// latency and the token counts into the metrics as its events are taken.
class TimedStream {
 public:
  TimedStream(std::shared_ptr<RequestStream> stream, ServerMetrics& metrics);
  bool next(Event& out, std::chrono::milliseconds timeout);
  bool finished() const { return finished_; }
  uint64_t id() const { return stream_->id(); }
  uint64_t seed() const { return stream_->seed(); }

 private:
  using Clock = std::chrono::steady_clock;
  std::shared_ptr<RequestStream> stream_;
  ServerMetrics* metrics_;
  Clock::time_point submitted_, last_token_;
  bool any_token_ = false, finished_ = false;
};

// Submits (a copy of) every request of `p`; when one is refused, cancels
// those already queued and throws the ApiError for the refusal.
std::vector<TimedStream> submit_all(Engine& engine, ParsedRequest& p, ServerMetrics& metrics);

// Waits for every stream; the merged event of each (all tokens, all text, the
// finish and usage of the last).
std::vector<Event> collect_all(std::vector<TimedStream>& streams);

// What a request cancelled by the engine (shutdown) answers: 503, code "cancelled".
ApiError cancelled_error();

// Writes one SSE frame; false when the client is gone.
using FrameWriter = std::function<bool(const std::string&)>;

// Streams the answer: OpenAI chunks then [DONE], or Anthropic's events. Returns
// false as soon as a write fails; the caller cancels the streams.
bool stream_answer(const ParsedRequest& p, const ResponseMeta& m, std::vector<TimedStream>& streams,
                   const tok::Tokenizer& tok, const FrameWriter& write);

}  // namespace cairn::server
