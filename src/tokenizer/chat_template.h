// Chat templates: a model's Jinja template (from tokenizer_config.json)
// rendered over a conversation into the prompt text the model was trained on.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "tokenizer/jinja/template.h"

namespace cairn {

// What a chat request contributes to the template's context.
struct ChatInputs {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();  // [{role, content, ...}]
  nlohmann::ordered_json tools;  // null (left out of the context) or a list of tool schemas
  bool add_generation_prompt = true;
  // Further template variables (enable_thinking, reasoning_effort, ...); override the rest.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

class ChatTemplate {
 public:
  // Throws cairn::Error naming `name` and the line on a syntax error.
  static ChatTemplate parse(std::string source, std::string name);

  // Renders with `context` as the template's variables.
  std::string render(const nlohmann::ordered_json& context,
                     const jinja::RenderOptions& options = {}) const;
  const std::string& name() const { return template_.name(); }

 private:
  explicit ChatTemplate(jinja::Template t) : template_(std::move(t)) {}
  jinja::Template template_;
};

// The context a chat template sees: the special tokens, then messages, tools
// (when given), add_generation_prompt, then the extra variables.
nlohmann::ordered_json build_chat_context(const ChatInputs& inputs,
                                          const nlohmann::ordered_json& special_tokens);

// The chat templates and special tokens of a tokenizer_config.json.
class ChatTemplates {
 public:
  // `config` is the parsed file; `origin` names it in errors. `chat_template`
  // may be a string or a list of {name, template}.
  static ChatTemplates from_config(const nlohmann::ordered_json& config, const std::string& origin);
  static ChatTemplates load(const std::filesystem::path& tokenizer_config);

  // "tool_use" when tools are given and the file has one, else "default".
  const ChatTemplate& choose(bool has_tools) const;
  const ChatTemplate* find(const std::string& name) const;
  // {bos_token: ..., eos_token: ...}: every *_token entry given as a string or {content}.
  const nlohmann::ordered_json& special_tokens() const { return special_tokens_; }

  std::string apply(const ChatInputs& inputs, const jinja::RenderOptions& options = {}) const;

 private:
  std::vector<std::pair<std::string, ChatTemplate>> templates_;
  nlohmann::ordered_json special_tokens_ = nlohmann::ordered_json::object();
  std::string origin_;
};

}  // namespace cairn
