#include "server/responses.h"

#include <fmt/format.h>

#include <random>

#include "server/api_error.h"

namespace cairn::server {

std::string new_response_id(Api api) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const char* prefix = api == Api::kChat ? "chatcmpl-" : api == Api::kCompletion ? "cmpl-" : "msg_";
  return fmt::format("{}{:016x}{:08x}", prefix, rng(), static_cast<uint32_t>(rng()));
}

const char* openai_finish(FinishReason r) {
  switch (r) {
    case FinishReason::kLength:
      return "length";
    case FinishReason::kError:
      return "error";
    default:
      return "stop";
  }
}

const char* anthropic_stop_reason(const Event& e) {
  if (e.finish == FinishReason::kLength) return "max_tokens";
  return e.stop_index >= 0 ? "stop_sequence" : "end_turn";
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

Usage add_usage(const Usage& a, const Usage& b) {
  return {a.prompt_tokens + b.prompt_tokens, a.completion_tokens + b.completion_tokens,
          a.cached_tokens + b.cached_tokens};
}

namespace {

std::string token_bytes(const tok::Tokenizer& tok, int32_t id) {
  std::string out;
  tok.append_token_bytes(id, false, out);
  return out;
}

json bytes_array(const std::string& s) {
  json a = json::array();
  for (unsigned char c : s) a.push_back(static_cast<int>(c));
  return a;
}

json chat_logprob_entry(const tok::Tokenizer& tok, int32_t id, float logprob) {
  std::string bytes = token_bytes(tok, id);
  return {{"token", tok.decode(std::vector<int32_t>{id}, false)},
          {"logprob", logprob},
          {"bytes", bytes_array(bytes)}};
}

}  // namespace

json chat_logprobs(const std::vector<TokenOut>& tokens, const tok::Tokenizer& tok) {
  json content = json::array();
  for (const TokenOut& t : tokens) {
    json e = chat_logprob_entry(tok, t.id, t.logprob);
    json top = json::array();
    for (const TokenLogprob& alt : t.top)
      top.push_back(chat_logprob_entry(tok, alt.id, alt.logprob));
    e["top_logprobs"] = std::move(top);
    content.push_back(std::move(e));
  }
  return {{"content", std::move(content)}};
}

json completion_logprobs(const std::vector<TokenOut>& tokens, const tok::Tokenizer& tok,
                         int64_t offset) {
  json toks = json::array(), lps = json::array(), tops = json::array(), offs = json::array();
  for (const TokenOut& t : tokens) {
    std::string text = tok.decode(std::vector<int32_t>{t.id}, false);
    toks.push_back(text);
    lps.push_back(t.logprob);
    json top = json::object();
    for (const TokenLogprob& alt : t.top)
      top[tok.decode(std::vector<int32_t>{alt.id}, false)] = alt.logprob;
    tops.push_back(std::move(top));
    offs.push_back(offset);
    offset += static_cast<int64_t>(text.size());
  }
  return {{"tokens", toks}, {"token_logprobs", lps}, {"top_logprobs", tops}, {"text_offset", offs}};
}

namespace {

json envelope(const ResponseMeta& m, const char* object) {
  return {{"id", m.id},
          {"object", object},
          {"created", m.created},
          {"model", m.model},
          {"system_fingerprint", m.system_fingerprint},
          {"seed", m.seed}};
}

}  // namespace

json chat_response(const ResponseMeta& m, const ParsedRequest& p, const std::vector<Event>& results,
                   const tok::Tokenizer& tok) {
  json r = envelope(m, "chat.completion");
  json choices = json::array();
  Usage total;
  for (size_t i = 0; i < results.size(); ++i) {
    const Event& e = results[i];
    choices.push_back({{"index", i},
                       {"message", {{"role", "assistant"}, {"content", e.text}}},
                       {"logprobs", p.logprobs ? chat_logprobs(e.tokens, tok) : json(nullptr)},
                       {"finish_reason", openai_finish(e.finish)}});
    total = add_usage(total, e.usage);
  }
  r["choices"] = std::move(choices);
  r["usage"] = usage_json(total);
  return r;
}

json completion_response(const ResponseMeta& m, const ParsedRequest& p,
                         const std::vector<Event>& results, const tok::Tokenizer& tok) {
  json r = envelope(m, "text_completion");
  json choices = json::array();
  Usage total;
  for (size_t i = 0; i < results.size(); ++i) {
    const Event& e = results[i];
    choices.push_back(
        {{"index", i},
         {"text", e.text},
         {"logprobs", p.logprobs ? completion_logprobs(e.tokens, tok, 0) : json(nullptr)},
         {"finish_reason", openai_finish(e.finish)}});
    total = add_usage(total, e.usage);
  }
  r["choices"] = std::move(choices);
  r["usage"] = usage_json(total);
  return r;
}

json chat_chunk(const ResponseMeta& m, int index, json delta, json logprobs,
                std::optional<std::string> finish) {
  json r = envelope(m, "chat.completion.chunk");
  r["choices"] = json::array({{{"index", index},
                               {"delta", std::move(delta)},
                               {"logprobs", std::move(logprobs)},
                               {"finish_reason", finish ? json(*finish) : json(nullptr)}}});
  return r;
}

json completion_chunk(const ResponseMeta& m, int index, const std::string& text, json logprobs,
                      std::optional<std::string> finish) {
  json r = envelope(m, "text_completion");
  r["choices"] = json::array({{{"index", index},
                               {"text", text},
                               {"logprobs", std::move(logprobs)},
                               {"finish_reason", finish ? json(*finish) : json(nullptr)}}});
  return r;
}

json usage_chunk(const ResponseMeta& m, Api api, const Usage& u) {
  json r = envelope(m, api == Api::kChat ? "chat.completion.chunk" : "text_completion");
  r["choices"] = json::array();
  r["usage"] = usage_json(u);
  return r;
}

std::string sse_data(const json& j) {
  return "data: " + dump_json(j) + "\n\n";
}

std::string sse_done() {
  return "data: [DONE]\n\n";
}

std::string sse_event(const std::string& name, const json& j) {
  return "event: " + name + "\ndata: " + dump_json(j) + "\n\n";
}

}  // namespace cairn::server
