#include "tokenizer/chat_template.h"

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace cairn {

ChatTemplate ChatTemplate::parse(std::string source, std::string name) {
  return ChatTemplate(jinja::Template::parse(std::move(source), std::move(name)));
}

std::string ChatTemplate::render(const nlohmann::ordered_json& context,
                                 const jinja::RenderOptions& options) const {
  return template_.render(context, options);
}

nlohmann::ordered_json build_chat_context(const ChatInputs& inputs,
                                          const nlohmann::ordered_json& special_tokens) {
  nlohmann::ordered_json context = nlohmann::ordered_json::object();
  if (special_tokens.is_object())
    for (const auto& [key, value] : special_tokens.items()) context[key] = value;
  if (!inputs.messages.is_array())
    fail(ErrorCode::kInvalidArgument, "chat: 'messages' must be a list");
  context["messages"] = inputs.messages;
  if (!inputs.tools.is_null()) {
    if (!inputs.tools.is_array()) fail(ErrorCode::kInvalidArgument, "chat: 'tools' must be a list");
    context["tools"] = inputs.tools;
  }
  context["add_generation_prompt"] = inputs.add_generation_prompt;
  if (inputs.extra.is_object())
    for (const auto& [key, value] : inputs.extra.items()) context[key] = value;
  return context;
}

ChatTemplates ChatTemplates::from_config(const nlohmann::ordered_json& config,
                                         const std::string& origin) {
  ChatTemplates out;
  out.origin_ = origin;
  if (!config.is_object()) fail(ErrorCode::kBadFile, "{}: expected a JSON object", origin);
  for (const auto& [key, value] : config.items()) {
    if (key.size() < 6 || key.compare(key.size() - 6, 6, "_token") != 0) continue;
    if (value.is_string())
      out.special_tokens_[key] = value;
    else if (value.is_object() && value.contains("content") && value["content"].is_string())
      out.special_tokens_[key] = value["content"];
  }
  auto it = config.find("chat_template");
  if (it == config.end() || it->is_null())
    fail(ErrorCode::kBadFile, "{}: no 'chat_template'", origin);
  if (it->is_string()) {
    out.templates_.emplace_back("default", ChatTemplate::parse(it->get<std::string>(), origin));
    return out;
  }
  if (!it->is_array())
    fail(ErrorCode::kBadFile, "{}: 'chat_template' must be a string or a list", origin);
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& entry = (*it)[i];
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() ||
        !entry.contains("template") || !entry["template"].is_string())
      fail(ErrorCode::kBadFile, "{}: chat_template[{}] must be {{name, template}} strings", origin,
           i);
    std::string name = entry["name"].get<std::string>();
    out.templates_.emplace_back(
        name, ChatTemplate::parse(entry["template"].get<std::string>(), origin + ":" + name));
  }
  if (!out.find("default"))
    fail(ErrorCode::kBadFile, "{}: chat_template has no 'default' entry", origin);
  return out;
}

ChatTemplates ChatTemplates::load(const std::filesystem::path& tokenizer_config) {
  std::ifstream in(tokenizer_config);
  if (!in) fail(ErrorCode::kBadFile, "{}: cannot open", tokenizer_config.string());
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json config = nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (config.is_discarded())
    fail(ErrorCode::kBadFile, "{}: not valid JSON", tokenizer_config.string());
  return from_config(config, tokenizer_config.string());
}

const ChatTemplate* ChatTemplates::find(const std::string& name) const {
  for (const auto& [n, t] : templates_)
    if (n == name) return &t;
  return nullptr;
}

const ChatTemplate& ChatTemplates::choose(bool has_tools) const {
  if (has_tools)
    if (const ChatTemplate* t = find("tool_use")) return *t;
  return *find("default");
}

std::string ChatTemplates::apply(const ChatInputs& inputs,
                                 const jinja::RenderOptions& options) const {
  bool has_tools = inputs.tools.is_array() && !inputs.tools.empty();
  return choose(has_tools).render(build_chat_context(inputs, special_tokens_), options);
}

}  // namespace cairn
