#include "server/generation.h"

#include "server/anthropic_response.h"
#include "server/api_error.h"

namespace cairn::server {

TimedStream::TimedStream(std::shared_ptr<RequestStream> stream, ServerMetrics& metrics)
    : stream_(std::move(stream)), metrics_(&metrics), submitted_(Clock::now()) {}

bool TimedStream::next(Event& out, std::chrono::milliseconds timeout) {
  if (!stream_->next(out, timeout)) return false;
  Clock::time_point now = Clock::now();
  auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  size_t n = out.tokens.size();
  if (n > 0) {
    size_t gaps = n;
    if (!any_token_) {
      metrics_->ttft.observe(seconds(now - submitted_));
      any_token_ = true;
      last_token_ = now;
      --gaps;
    }
    // Tokens merged into one event arrived together: their gap is shared.
    for (size_t i = 0; i < gaps; ++i)
      metrics_->inter_token.observe(seconds(now - last_token_) / static_cast<double>(n));
    last_token_ = now;
  }
  if (out.finished) {
    finished_ = true;
    metrics_->e2e.observe(seconds(now - submitted_));
    metrics_->count_tokens(out.usage.prompt_tokens, out.usage.completion_tokens);
  }
  return true;
}

std::vector<TimedStream> submit_all(Engine& engine, ParsedRequest& p, ServerMetrics& metrics) {
  std::vector<TimedStream> streams;
  try {
    for (const Request& r : p.requests) streams.emplace_back(engine.submit(r), metrics);
  } catch (const Error& e) {
    for (const TimedStream& s : streams) engine.cancel(s.id());
    throw from_engine_error(e);
  }
  return streams;
}

std::vector<Event> collect_all(std::vector<TimedStream>& streams) {
  std::vector<Event> out(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    Event e;
    while (!streams[i].finished())
      if (streams[i].next(e, std::chrono::milliseconds(1000))) {
        out[i].tokens.insert(out[i].tokens.end(), e.tokens.begin(), e.tokens.end());
        out[i].text += e.text;
        out[i].finished = e.finished;
        out[i].finish = e.finish;
        out[i].error = e.error;
        // The engine names the stop string on the event that stopped, not the final one.
        if (e.stop_index >= 0) out[i].stop_index = e.stop_index;
        out[i].usage = e.usage;
      }
  }
  return out;
}

ApiError cancelled_error() {
  return ApiError(503, "unavailable_error",
                  "the request was cancelled: the server is shutting down", "", "cancelled");
}

namespace {

// A comment frame every few idle seconds: SSE parsers skip it, and a failed
// write tells a queued request that its client has left.
constexpr std::chrono::seconds kKeepAlive{5};

// Calls on_event(index, event) for each event of every stream until all finish;
// false when on_event or a keep-alive write fails.
template <typename OnEvent>
bool pump(std::vector<TimedStream>& streams, const FrameWriter& write, OnEvent on_event) {
  auto wait = std::chrono::milliseconds(streams.size() == 1 ? 250 : 2);
  auto last_write = std::chrono::steady_clock::now();
  for (size_t live = streams.size(); live > 0;) {
    bool any = false;
    for (size_t i = 0; i < streams.size(); ++i) {
      Event e;
      if (streams[i].finished() || !streams[i].next(e, wait)) continue;
      any = true;
      if (!on_event(static_cast<int>(i), e)) return false;
      if (e.finished) --live;
    }
    auto now = std::chrono::steady_clock::now();
    if (any) last_write = now;
    if (!any && now - last_write > kKeepAlive) {
      if (!write(": keep-alive\n\n")) return false;
      last_write = now;
    }
  }
  return true;
}

ApiError unfinished_error(const Event& e) {
  if (e.finish == FinishReason::kCancelled) return cancelled_error();
  return ApiError(500, "server_error", e.error.empty() ? "generation failed" : e.error);
}

bool failed(const Event& e) {
  return e.finish == FinishReason::kError || e.finish == FinishReason::kCancelled;
}

bool stream_chat(const ParsedRequest& p, const ResponseMeta& m, std::vector<TimedStream>& streams,
                 const tok::Tokenizer& tok, const FrameWriter& write) {
  if (!write(sse_data(chat_chunk(m, 0, {{"role", "assistant"}, {"content", ""}}, nullptr, {}))))
    return false;
  Usage total;
  bool ok = pump(streams, write, [&](int i, const Event& e) {
    if (!e.text.empty() || (p.logprobs && !e.tokens.empty())) {
      json lp = p.logprobs ? chat_logprobs(e.tokens, tok) : json(nullptr);
      if (!write(sse_data(chat_chunk(m, i, {{"content", e.text}}, lp, {})))) return false;
    }
    if (!e.finished) return true;
    total = add_usage(total, e.usage);
    if (failed(e) && !write(sse_data(openai_error_body(unfinished_error(e))))) return false;
    return write(sse_data(chat_chunk(m, i, json::object(), nullptr, openai_finish(e.finish))));
  });
  if (!ok) return false;
  if (p.include_usage && !write(sse_data(usage_chunk(m, p.api, total)))) return false;
  return write(sse_done());
}

bool stream_completion(const ParsedRequest& p, const ResponseMeta& m,
                       std::vector<TimedStream>& streams, const tok::Tokenizer& tok,
                       const FrameWriter& write) {
  Usage total;
  std::vector<int64_t> offsets(streams.size(), 0);
  bool ok = pump(streams, write, [&](int i, const Event& e) {
    if (!e.text.empty() || (p.logprobs && !e.tokens.empty())) {
      json lp = p.logprobs ? completion_logprobs(e.tokens, tok, offsets[i]) : json(nullptr);
      offsets[i] += static_cast<int64_t>(e.text.size());
      if (!write(sse_data(completion_chunk(m, i, e.text, lp, {})))) return false;
    }
    if (!e.finished) return true;
    total = add_usage(total, e.usage);
    if (failed(e) && !write(sse_data(openai_error_body(unfinished_error(e))))) return false;
    return write(sse_data(completion_chunk(m, i, "", nullptr, openai_finish(e.finish))));
  });
  if (!ok) return false;
  if (p.include_usage && !write(sse_data(usage_chunk(m, p.api, total)))) return false;
  return write(sse_done());
}

bool stream_messages(const ParsedRequest& p, const ResponseMeta& m,
                     std::vector<TimedStream>& streams, const FrameWriter& write) {
  auto n_prompt = static_cast<int64_t>(p.requests.front().prompt_ids.size());
  if (!write(messages_stream_start(m, n_prompt))) return false;
  int32_t stop_index = -1;
  return pump(streams, write, [&](int, const Event& e) {
    if (!e.text.empty() && !write(messages_stream_delta(e.text))) return false;
    if (e.stop_index >= 0) stop_index = e.stop_index;
    if (!e.finished) return true;
    if (failed(e)) return write(messages_stream_error(unfinished_error(e)));
    Event last = e;
    last.stop_index = stop_index;
    return write(messages_stream_end(p, last));
  });
}

}  // namespace

bool stream_answer(const ParsedRequest& p, const ResponseMeta& m, std::vector<TimedStream>& streams,
                   const tok::Tokenizer& tok, const FrameWriter& write) {
  switch (p.api) {
    case Api::kChat:
      return stream_chat(p, m, streams, tok, write);
    case Api::kCompletion:
      return stream_completion(p, m, streams, tok, write);
    default:
      return stream_messages(p, m, streams, write);
  }
}

}  // namespace cairn::server
