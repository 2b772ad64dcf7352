// POST /v1/messages (Anthropic Messages) bodies into engine Requests.
#include <fmt/format.h>

#include "server/api_error.h"
#include "server/json_fields.h"
#include "server/parsed_request.h"
#include "server/request_fields.h"

namespace cairn::server {

namespace {

// A string or a list of {"type": "text", "text": ...} blocks (joined).
std::string block_text(const json& content, const std::string& param) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) bad_field(param, param + " must be a string or a list of blocks");
  std::string text;
  for (size_t j = 0; j < content.size(); ++j) {
    std::string p = fmt::format("{}[{}]", param, j);
    if (!content[j].is_object()) bad_field(p, p + " must be an object");
    std::string type = string_field(content[j], "type", "", p + ".");
    if (type != "text")
      bad_field(p + ".type",
                fmt::format("{}.type \"{}\" is not supported (only \"text\")", p, type));
    text += string_field(content[j], "text", "", p + ".");
  }
  return text;
}

ChatInputs messages_inputs(const json& body) {
  ChatInputs in;
  if (const json* system = find_field(body, "system"))
    in.messages.push_back({{"role", "system"}, {"content", block_text(*system, "system")}});
  const json* messages = find_field(body, "messages");
  if (!messages) bad_field("messages", "messages is required");
  if (!messages->is_array() || messages->empty())
    bad_field("messages", "messages must be a non-empty list");
  for (size_t i = 0; i < messages->size(); ++i) {
    std::string p = fmt::format("messages[{}]", i);
    const json& m = (*messages)[i];
    if (!m.is_object()) bad_field(p, p + " must be an object");
    std::string role = string_field(m, "role", "", p + ".");
    if (role != "user" && role != "assistant")
      bad_field(p + ".role", fmt::format("{}.role \"{}\" is not user or assistant", p, role));
    const json* content = find_field(m, "content");
    if (!content) bad_field(p + ".content", p + ".content is required");
    in.messages.push_back({{"role", role}, {"content", block_text(*content, p + ".content")}});
  }
  in.add_generation_prompt = true;
  return in;
}

}  // namespace

ParsedRequest parse_messages(const std::string& text, const ParseContext& ctx) {
  json body = parse_body(text);
  ParsedRequest out;
  out.api = Api::kMessages;
  out.model = string_field(body, "model", "");
  out.stream = bool_field(body, "stream", false);
  if (const json* md = find_field(body, "metadata"); md && !md->is_object())
    bad_field("metadata", "metadata must be an object");
  Request r;
  read_sampling(body, ctx, r);
  read_stop(body, "stop_sequences", r);
  r.stop_ids = ctx.stop_ids;
  r.prompt_ids = ctx.prompter->ids(messages_inputs(body));
  read_max_tokens(body, {"max_tokens"}, -1, ctx, "messages", r);
  out.requests.push_back(std::move(r));
  return out;
}

}  // namespace cairn::server
