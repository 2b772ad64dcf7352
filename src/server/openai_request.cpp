// POST /v1/chat/completions and /v1/completions bodies into engine Requests.
#include <fmt/format.h>

#include "server/api_error.h"
#include "server/json_fields.h"
#include "server/parsed_request.h"
#include "server/request_fields.h"

namespace cairn::server {

namespace {

constexpr int32_t kMaxTopLogprobs = 20;
constexpr int64_t kCompletionDefaultTokens = 16;  // OpenAI's default for /v1/completions

bool known_role(const std::string& role) {
  return role == "system" || role == "developer" || role == "user" || role == "assistant" ||
         role == "tool";
}

// content: a string, null, or a list of {"type": "text", "text": ...} parts (joined).
std::string message_text(const json& content, const std::string& param) {
  if (content.is_null()) return "";
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) bad_field(param, param + " must be a string or a list of parts");
  std::string text;
  for (size_t j = 0; j < content.size(); ++j) {
    std::string p = fmt::format("{}[{}]", param, j);
    const json& part = content[j];
    if (!part.is_object()) bad_field(p, p + " must be an object");
    std::string type = string_field(part, "type", "", p + ".");
    if (type != "text")
      bad_field(p + ".type",
                fmt::format("{}.type \"{}\" is not supported (only \"text\")", p, type));
    text += string_field(part, "text", "", p + ".");
  }
  return text;
}

ChatInputs chat_inputs(const json& body) {
  const json* messages = find_field(body, "messages");
  if (!messages) bad_field("messages", "messages is required");
  if (!messages->is_array() || messages->empty())
    bad_field("messages", "messages must be a non-empty list");
  ChatInputs in;
  for (size_t i = 0; i < messages->size(); ++i) {
    std::string p = fmt::format("messages[{}]", i);
    const json& m = (*messages)[i];
    if (!m.is_object()) bad_field(p, p + " must be an object");
    std::string role = string_field(m, "role", "", p + ".");
    if (!known_role(role))
      bad_field(p + ".role", fmt::format("{}.role \"{}\" is not one of system, developer, user, "
                                         "assistant, tool",
                                         p, role));
    auto c = m.find("content");
    nlohmann::ordered_json msg = {
        {"role", role}, {"content", message_text(c == m.end() ? json() : *c, p + ".content")}};
    for (const char* extra : {"name", "tool_calls", "tool_call_id"})
      if (m.contains(extra)) msg[extra] = nlohmann::ordered_json::parse(m[extra].dump());
    in.messages.push_back(std::move(msg));
  }
  if (const json* tools = find_field(body, "tools")) {
    if (!tools->is_array()) bad_field("tools", "tools must be a list");
    in.tools = nlohmann::ordered_json::parse(tools->dump());
  }
  if (const json* kw = find_field(body, "chat_template_kwargs")) {
    if (!kw->is_object())
      bad_field("chat_template_kwargs", "chat_template_kwargs must be an object");
    in.extra = nlohmann::ordered_json::parse(kw->dump());
  }
  in.add_generation_prompt = true;
  return in;
}

void read_common(const json& body, const ParseContext& ctx, ParsedRequest& out, Request& r) {
  out.model = string_field(body, "model", "");
  string_field(body, "user", "");
  check_single_choice(body);
  out.stream = bool_field(body, "stream", false);
  if (const json* so = find_field(body, "stream_options")) {
    if (!so->is_object()) bad_field("stream_options", "stream_options must be an object");
    out.include_usage = bool_field(*so, "include_usage", false, "stream_options.");
  }
  if (const json* rf = find_field(body, "response_format")) {
    if (!rf->is_object() || string_field(*rf, "type", "text", "response_format.") != "text")
      bad_field("response_format", "response_format: only {\"type\": \"text\"} is supported");
  }
  read_sampling(body, ctx, r);
  read_stop(body, "stop", r);
  r.stop_ids = ctx.stop_ids;
}

}  // namespace

ParsedRequest parse_chat(const std::string& text, const ParseContext& ctx) {
  json body = parse_body(text);
  ParsedRequest out;
  out.api = Api::kChat;
  Request r;
  read_common(body, ctx, out, r);
  out.logprobs = bool_field(body, "logprobs", false);
  out.top_logprobs = static_cast<int32_t>(int_field(body, "top_logprobs", 0, kMaxTopLogprobs, 0));
  if (out.top_logprobs > 0 && !out.logprobs)
    bad_field("top_logprobs", "top_logprobs needs logprobs: true");
  r.logprobs = out.logprobs ? out.top_logprobs : -1;
  r.prompt_ids = ctx.prompter->ids(chat_inputs(body));
  read_max_tokens(body, {"max_completion_tokens", "max_tokens"}, 0, ctx, "messages", r);
  out.requests.push_back(std::move(r));
  return out;
}

namespace {

// prompt: a string, a list of strings, a list of token ids or a list of such lists.
std::vector<std::vector<int32_t>> prompt_list(const json& body, const ParseContext& ctx) {
  const json* p = find_field(body, "prompt");
  if (!p) bad_field("prompt", "prompt is required");
  int32_t vocab = ctx.tokenizer->vocab_size();
  std::vector<std::vector<int32_t>> out;
  auto one = [&](const json& v, const std::string& param) {
    if (v.is_string()) return out.push_back(text_prompt_ids(*ctx.tokenizer, v.get<std::string>()));
    if (!v.is_array()) bad_field(param, param + " must be a string or a list of token ids");
    std::vector<int32_t> ids;
    for (size_t i = 0; i < v.size(); ++i) {
      const json& t = v[i];
      std::string tp = fmt::format("{}[{}]", param, i);
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= vocab)
        bad_field(tp, fmt::format("{} must be a token id in [0, {})", tp, vocab));
      ids.push_back(t.get<int32_t>());
    }
    out.push_back(std::move(ids));
  };
  bool nested = p->is_array() && !p->empty() && ((*p)[0].is_string() || (*p)[0].is_array());
  if (!nested) {
    one(*p, "prompt");
  } else {
    if (p->size() > static_cast<size_t>(ctx.max_prompts))
      bad_field("prompt", fmt::format("prompt holds more than {} prompts", ctx.max_prompts));
    for (size_t i = 0; i < p->size(); ++i) one((*p)[i], fmt::format("prompt[{}]", i));
  }
  return out;
}

}  // namespace

ParsedRequest parse_completion(const std::string& text, const ParseContext& ctx) {
  json body = parse_body(text);
  ParsedRequest out;
  out.api = Api::kCompletion;
  Request base;
  read_common(body, ctx, out, base);
  if (bool_field(body, "echo", false)) bad_field("echo", "echo is not supported");
  if (find_field(body, "suffix")) bad_field("suffix", "suffix is not supported");
  int64_t lp = int_field(body, "logprobs", 0, kMaxTopLogprobs, -1);
  out.logprobs = lp >= 0;
  out.top_logprobs = static_cast<int32_t>(std::max<int64_t>(lp, 0));
  base.logprobs = static_cast<int32_t>(lp);
  std::vector<std::vector<int32_t>> prompts = prompt_list(body, ctx);
  for (size_t i = 0; i < prompts.size(); ++i) {
    Request r = base;
    r.prompt_ids = std::move(prompts[i]);
    std::string param = prompts.size() == 1 ? "prompt" : fmt::format("prompt[{}]", i);
    if (r.prompt_ids.empty()) {
      if (ctx.tokenizer->bos_id() < 0) bad_field(param, param + " is empty");
      r.prompt_ids.push_back(ctx.tokenizer->bos_id());
    }
    read_max_tokens(body, {"max_tokens"}, kCompletionDefaultTokens, ctx, param, r);
    out.requests.push_back(std::move(r));
  }
  return out;
}

}  // namespace cairn::server
