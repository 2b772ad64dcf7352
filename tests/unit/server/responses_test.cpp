// Answer shapes: OpenAI bodies and chunks, Anthropic events, SSE framing,
// error bodies and statuses, the metrics exposition.
#include <gtest/gtest.h>
#include <unistd.h>

#include "server/anthropic_response.h"
#include "server/metrics.h"
#include "server/responses.h"
#include "server_fixture.h"

namespace cairn::server {
namespace {

ResponseMeta meta() {
  return {"chatcmpl-1", "tiny", 1700000000, "fp_abc", 42};
}

Event finished_event(const std::string& text, FinishReason why) {
  Event e;
  e.text = text;
  e.finished = true;
  e.finish = why;
  e.usage = {10, 3, 4};
  e.tokens = {{3 + 'o', -0.5f, {{3 + 'o', -0.5f}, {3 + 'x', -1.5f}}}};
  return e;
}

TEST(Responses, ChatCompletionShape) {
  test::TinyServerModel m;
  ParsedRequest p;
  p.logprobs = true;
  json r = chat_response(meta(), p, {finished_event("ok", FinishReason::kStop)}, *m.tokenizer);
  EXPECT_EQ(r["object"], "chat.completion");
  EXPECT_EQ(r["system_fingerprint"], "fp_abc");
  EXPECT_EQ(r["seed"], 42);
  EXPECT_EQ(r["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(r["choices"][0]["message"]["content"], "ok");
  EXPECT_EQ(r["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(r["usage"]["prompt_tokens"], 10);
  EXPECT_EQ(r["usage"]["completion_tokens"], 3);
  EXPECT_EQ(r["usage"]["total_tokens"], 13);
  EXPECT_EQ(r["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
  const json& lp = r["choices"][0]["logprobs"]["content"][0];
  EXPECT_EQ(lp["token"], "o");
  EXPECT_EQ(lp["bytes"], json::array({'o'}));
  EXPECT_FLOAT_EQ(lp["logprob"].get<float>(), -0.5f);
  EXPECT_EQ(lp["top_logprobs"].size(), 2u);
  EXPECT_EQ(lp["top_logprobs"][1]["token"], "x");
}

TEST(Responses, CompletionShapeAndLengthFinish) {
  test::TinyServerModel m;
  ParsedRequest p;
  p.api = Api::kCompletion;
  p.logprobs = true;
  json r = completion_response(
      meta(), p,
      {finished_event("a", FinishReason::kLength), finished_event("b", FinishReason::kStop)},
      *m.tokenizer);
  EXPECT_EQ(r["object"], "text_completion");
  ASSERT_EQ(r["choices"].size(), 2u);
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r["choices"][1]["index"], 1);
  EXPECT_EQ(r["choices"][1]["text"], "b");
  EXPECT_EQ(r["usage"]["prompt_tokens"], 20);
  const json& lp = r["choices"][0]["logprobs"];
  EXPECT_EQ(lp["tokens"][0], "o");
  EXPECT_EQ(lp["text_offset"][0], 0);
  EXPECT_FLOAT_EQ(lp["top_logprobs"][0]["x"].get<float>(), -1.5f);
}

TEST(Responses, ChunksAndSseFraming) {
  json c = chat_chunk(meta(), 0, {{"content", "hé"}}, nullptr, std::nullopt);
  EXPECT_EQ(c["object"], "chat.completion.chunk");
  EXPECT_TRUE(c["choices"][0]["finish_reason"].is_null());
  EXPECT_EQ(c["choices"][0]["delta"]["content"], "hé");
  std::string frame = sse_data(c);
  EXPECT_EQ(frame.rfind("data: {", 0), 0u);
  EXPECT_EQ(frame.substr(frame.size() - 2), "\n\n");
  EXPECT_EQ(frame.find('\n'), frame.size() - 2);  // one line: JSON never holds a raw newline
  EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
  json u = usage_chunk(meta(), Api::kChat, {5, 6, 0});
  EXPECT_TRUE(u["choices"].empty());
  EXPECT_EQ(u["usage"]["total_tokens"], 11);
  EXPECT_EQ(sse_event("ping", {{"type", "ping"}}), "event: ping\ndata: {\"type\":\"ping\"}\n\n");
  // Invalid UTF-8 from a partial token never throws; it becomes U+FFFD.
  EXPECT_NE(sse_data({{"t", std::string("\xff")}}).find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(Responses, AnthropicMessageAndStreamEvents) {
  ParsedRequest p;
  p.api = Api::kMessages;
  p.requests.resize(1);
  p.requests[0].stop_strings = {"END"};
  Event e = finished_event("hi", FinishReason::kStop);
  e.stop_index = 0;
  ResponseMeta mm = meta();
  mm.id = "msg_1";
  json r = messages_response(mm, p, e);
  EXPECT_EQ(r["type"], "message");
  EXPECT_EQ(r["content"][0]["text"], "hi");
  EXPECT_EQ(r["stop_reason"], "stop_sequence");
  EXPECT_EQ(r["stop_sequence"], "END");
  EXPECT_EQ(r["usage"]["input_tokens"], 10);
  EXPECT_EQ(r["usage"]["output_tokens"], 3);
  std::string s =
      messages_stream_start(mm, 10) + messages_stream_delta("hi") + messages_stream_end(p, e);
  std::vector<std::string> order;
  for (size_t pos = 0; (pos = s.find("event: ", pos)) != std::string::npos; pos += 7)
    order.push_back(s.substr(pos + 7, s.find('\n', pos) - pos - 7));
  EXPECT_EQ(order, (std::vector<std::string>{"message_start", "content_block_start", "ping",
                                             "content_block_delta", "content_block_stop",
                                             "message_delta", "message_stop"}));
  e.finish = FinishReason::kLength;
  e.stop_index = -1;
  EXPECT_EQ(messages_response(mm, p, e)["stop_reason"], "max_tokens");
}

TEST(Errors, EngineErrorsMapToStatuses) {
  EXPECT_EQ(from_engine_error(Error(ErrorCode::kInvalidArgument, "x")).status, 400);
  ApiError ctx = from_engine_error(Error(ErrorCode::kContextLength, "x"));
  EXPECT_EQ(ctx.status, 400);
  EXPECT_EQ(ctx.code, "context_length_exceeded");
  EXPECT_EQ(from_engine_error(Error(ErrorCode::kQueueFull, "x")).status, 429);
  EXPECT_EQ(from_engine_error(Error(ErrorCode::kUnavailable, "x")).status, 503);
  EXPECT_EQ(from_engine_error(Error(ErrorCode::kInternal, "x")).status, 500);
  json o = openai_error_body(ApiError(400, "invalid_request_error", "bad top_p", "top_p"));
  EXPECT_EQ(o["error"]["message"], "bad top_p");
  EXPECT_EQ(o["error"]["type"], "invalid_request_error");
  EXPECT_EQ(o["error"]["param"], "top_p");
  EXPECT_TRUE(o["error"]["code"].is_null());
  json a = anthropic_error_body(ApiError(429, "rate_limit_error", "full"));
  EXPECT_EQ(a["type"], "error");
  EXPECT_EQ(a["error"]["type"], "rate_limit_error");
}

TEST(Metrics, HistogramIsCumulativeAndExpositionNamesEveryFamily) {
  Histogram h({0.1, 1.0});
  h.observe(0.05);
  h.observe(0.5);
  h.observe(5);
  std::string out;
  h.write(out, "x_seconds", "help");
  EXPECT_NE(out.find("x_seconds_bucket{le=\"0.1\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_seconds_bucket{le=\"1\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_seconds_count 3\n"), std::string::npos) << out;
  ServerMetrics m;
  m.count_request("/v1/completions", 200);
  m.count_request("/v1/completions", 200);
  EngineStats s;
  s.n_waiting = 3;
  s.kv_pages_used = 4;
  s.kv_bytes_used = 400;
  s.kv_bytes_budget = 1000;
  s.prefix_hit_tokens = 77;
  s.checkpoints_written = 5, s.checkpoints_resumed = 2, s.checkpoints_failed = 1;
  std::string text = m.render(s, true, false);
  for (const char* want :
       {"cairn_http_requests_total{route=\"/v1/completions\",status=\"200\"} 2\n",
        "cairn_queue_depth 3\n", "cairn_kv_pages_used 4\n", "cairn_kv_pages_free 6\n",
        "cairn_prefix_cache_hit_tokens_total 77\n",
        "# TYPE cairn_time_to_first_token_seconds histogram",
        "cairn_inter_token_latency_seconds_count 0\n", "cairn_running_sequences 0\n",
        "cairn_checkpoints_written_total 5\n", "cairn_checkpoints_resumed_total 2\n",
        "cairn_checkpoints_failed_total 1\n", "cairn_checkpoints_corrupt_total 0\n"})
    EXPECT_NE(text.find(want), std::string::npos) << want;
}

}  // namespace
}  // namespace cairn::server
