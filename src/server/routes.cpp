// The route handlers of HttpServer.
#include <fmt/format.h>

#include <chrono>

#include "server/anthropic_response.h"
#include "server/generation.h"
#include "server/http_server_impl.h"
#include "server/json_fields.h"
#include "server/responses.h"

namespace cairn::server {

namespace {

using httplib::Request;
using httplib::Response;

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What a streamed answer needs after its handler returned.
struct StreamJob {
  ParsedRequest parsed;
  ResponseMeta meta;
  std::vector<TimedStream> streams;
  Engine* engine = nullptr;
  const tok::Tokenizer* tokenizer = nullptr;
  bool completed = false;
};

}  // namespace

void HttpServer::Impl::install_routes() {
  auto on = [this](Api api) {
    return [this, api](const Request& req, Response& res) {
      try {
        generate(api, req, res);
      } catch (const ApiError& e) {
        send_error(req, res, e);
      } catch (const Error& e) {
        send_error(req, res, from_engine_error(e));
      }
    };
  };
  http.Post("/v1/chat/completions", on(Api::kChat));
  http.Post("/v1/completions", on(Api::kCompletion));
  http.Post("/v1/messages", on(Api::kMessages));
  auto plain = [this](void (Impl::*fn)(const Request&, Response&)) {
    return [this, fn](const Request& req, Response& res) {
      try {
        (this->*fn)(req, res);
      } catch (const ApiError& e) {
        send_error(req, res, e);
      } catch (const Error& e) {
        send_error(req, res, from_engine_error(e));
      }
    };
  };
  http.Get("/v1/models", plain(&Impl::list_models));
  http.Get("/v1/models/(.+)", plain(&Impl::list_models));
  http.Post("/tokenize", plain(&Impl::tokenize));
  http.Post("/detokenize", plain(&Impl::detokenize));
  http.Get("/health", plain(&Impl::health));
  http.Get("/metrics", plain(&Impl::metrics));
  http.Post("/admin/cache/flush", plain(&Impl::flush_cache));
}

void HttpServer::Impl::require_ready() const {
  int state = s.state_.load();
  if (state == kLoading)
    throw ApiError(503, "unavailable_error", "the model is loading", "", "model_loading");
  if (state == kDraining)
    throw ApiError(503, "unavailable_error", "the server is shutting down", "", "draining");
}

std::string HttpServer::Impl::model_name() const {
  if (!s.options_.served_model_name.empty()) return s.options_.served_model_name;
  return s.model_.name;
}

void HttpServer::Impl::generate(Api api, const Request& req, Response& res) {
  require_ready();
  const ServedModel& m = s.model_;
  auto job = std::make_shared<StreamJob>();
  job->parsed = api == Api::kChat         ? parse_chat(req.body, m.parse)
                : api == Api::kCompletion ? parse_completion(req.body, m.parse)
                                          : parse_messages(req.body, m.parse);
  job->engine = m.engine;
  job->tokenizer = m.tokenizer;
  job->streams = submit_all(*m.engine, job->parsed, s.metrics_);
  job->meta = {new_response_id(api), model_name(), unix_now(), m.fingerprint,
               static_cast<int64_t>(job->streams[0].seed())};
  if (!job->parsed.stream) {
    std::vector<Event> results = collect_all(job->streams);
    for (const Event& e : results)
      if (e.finish == FinishReason::kCancelled)
        throw cancelled_error();
      else if (e.finish == FinishReason::kError)
        throw ApiError(500, "server_error", e.error);
    const ParsedRequest& p = job->parsed;
    if (api == Api::kChat)
      return send_json(res, 200, chat_response(job->meta, p, results, *m.tokenizer));
    if (api == Api::kCompletion)
      return send_json(res, 200, completion_response(job->meta, p, results, *m.tokenizer));
    return send_json(res, 200, messages_response(job->meta, p, results[0]));
  }
  s.active_.fetch_add(1);
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [job](size_t, httplib::DataSink& sink) {
        auto write = [&sink](const std::string& frame) {
          return sink.write(frame.data(), frame.size());
        };
        if (!stream_answer(job->parsed, job->meta, job->streams, *job->tokenizer, write))
          return false;
        job->completed = true;
        sink.done();
        return true;
      },
      [this, job](bool) {
        if (!job->completed) {
          for (const TimedStream& t : job->streams) job->engine->cancel(t.id());
          s.metrics_.count_disconnect();
        }
        s.active_.fetch_sub(1);
      });
}

void HttpServer::Impl::list_models(const Request& req, Response& res) {
  if (s.state_.load() == kLoading)
    throw ApiError(503, "unavailable_error", "the model is loading", "", "model_loading");
  json card = {{"id", model_name()},
               {"object", "model"},
               {"created", s.model_.created},
               {"owned_by", "cairn"},
               {"max_model_len", s.model_.parse.context_length}};
  if (req.matches.size() > 1) {
    if (req.matches[1].str() != model_name())
      throw ApiError(404, "invalid_request_error",
                     fmt::format("model \"{}\" is not served here", req.matches[1].str()), "model",
                     "model_not_found");
    return send_json(res, 200, card);
  }
  send_json(res, 200, {{"object", "list"}, {"data", json::array({card})}});
}

void HttpServer::Impl::tokenize(const Request& req, Response& res) {
  require_ready();
  json body = parse_body(req.body);
  const ServedModel& m = s.model_;
  std::vector<int32_t> ids;
  if (const json* messages = find_field(body, "messages")) {
    (void)messages;
    ids = parse_chat(req.body, m.parse).requests[0].prompt_ids;
  } else {
    const json* prompt = find_field(body, "prompt");
    if (!prompt || !prompt->is_string())
      bad_field("prompt", "prompt (a string) or messages is required");
    tok::EncodeOptions opts;
    opts.add_special_tokens = bool_field(body, "add_special_tokens", true);
    opts.parse_special = bool_field(body, "parse_special", false);
    ids = m.tokenizer->encode(prompt->get<std::string>(), opts);
  }
  json out = {{"tokens", ids}, {"count", ids.size()}, {"max_model_len", m.parse.context_length}};
  if (bool_field(body, "return_token_strs", false)) {
    json strs = json::array();
    for (int32_t id : ids) strs.push_back(m.tokenizer->piece(id));
    out["token_strs"] = std::move(strs);
  }
  send_json(res, 200, out);
}

void HttpServer::Impl::detokenize(const Request& req, Response& res) {
  require_ready();
  json body = parse_body(req.body);
  const json* tokens = find_field(body, "tokens");
  if (!tokens || !tokens->is_array())
    bad_field("tokens", "tokens (a list of token ids) is required");
  int32_t vocab = s.model_.tokenizer->vocab_size();
  std::vector<int32_t> ids;
  for (size_t i = 0; i < tokens->size(); ++i) {
    const json& t = (*tokens)[i];
    std::string p = fmt::format("tokens[{}]", i);
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= vocab)
      bad_field(p, fmt::format("{} must be a token id in [0, {})", p, vocab));
    ids.push_back(t.get<int32_t>());
  }
  bool skip = bool_field(body, "skip_special_tokens", true);
  send_json(res, 200, {{"prompt", s.model_.tokenizer->decode(ids, skip)}});
}

void HttpServer::Impl::health(const Request&, Response& res) {
  int state = s.state_.load();
  const char* name = state == kLoading ? "loading" : state == kDraining ? "draining" : "ok";
  nlohmann::json body = {{"status", name}};
  if (state != kLoading && s.model_.engine) {
    const EngineStats st = s.model_.engine->stats();
    body["kv"] = {{"pages_used", st.kv_pages_used},
                  {"bytes_used", st.kv_bytes_used},
                  {"bytes_budget", st.kv_bytes_budget}};
    body["prefix_cache"] = {
        {"ram_bytes", st.prefix_cache_bytes},
        {"ram_pages", st.prefix_cache_pages},
        {"hits", st.prefix_hits},
        {"hit_tokens", st.prefix_hit_tokens},
        {"host_bytes", st.host_cache_bytes},
        {"host_pages", st.host_cache_pages},
        {"host_memory_bytes", st.host_cache_memory_bytes},
        {"host_restored_pages", st.host_restored_pages},
        {"host_restore_mb_per_s",
         st.host_restore_seconds > 0
             ? static_cast<double>(st.host_restore_bytes) / 1e6 / st.host_restore_seconds
             : 0.0},
        {"ssd_files", st.ssd_files},
        {"ssd_bytes", st.ssd_bytes},
        {"ssd_restored_pages", st.ssd_restored_pages},
        {"ssd_restore_cut_backs", st.ssd_restore_cut_backs},
        {"ssd_restore_mb_per_s",
         st.ssd_restore_seconds > 0
             ? static_cast<double>(st.ssd_restore_bytes) / 1e6 / st.ssd_restore_seconds
             : 0.0},
        {"spill_pending", st.spill_pending_items},
        {"spill_written", st.spill_written},
        {"spill_dropped", st.spill_dropped},
        {"spill_failed", st.spill_failed},
        {"checkpoint_files", st.checkpoint_files},
        {"checkpoints_written", st.checkpoints_written},
        {"checkpoints_resumed", st.checkpoints_resumed},
        {"checkpoints_failed", st.checkpoints_failed},
        {"checkpoints_corrupt", st.checkpoints_corrupt}};
  }
  send_json(res, state == kReady ? 200 : 503, body);
}

void HttpServer::Impl::metrics(const Request&, Response& res) {
  int state = s.state_.load();
  EngineStats stats =
      state != kLoading && s.model_.engine ? s.model_.engine->stats() : EngineStats{};
  res.status = 200;
  res.set_content(s.metrics_.render(stats, state != kLoading, state == kDraining),
                  "text/plain; version=0.0.4");
}

// 200 {"durable":true,…} once every page spilled so far is on disk; 503 with
// the evidence (pending, dropped, failed, the last error) otherwise.
void HttpServer::Impl::flush_cache(const Request&, Response& res) {
  if (s.state_.load() == kLoading || !s.model_.engine)
    throw ApiError(503, "unavailable_error", "the model is loading", "", "model_loading");
  const CacheFlush f = s.model_.engine->flush_cache(std::chrono::seconds(30));
  send_json(res, f.durable ? 200 : 503,
            {{"durable", f.durable},
             {"timed_out", f.timed_out},
             {"pending_items", f.pending_items},
             {"pending_bytes", f.pending_bytes},
             {"dropped", f.dropped},
             {"failed", f.failed},
             {"error", f.error}});
}

}  // namespace cairn::server
