#include "server/prompt_ids.h"

#include <filesystem>

#include "core/error.h"
#include "model/config.h"

namespace cairn {

std::vector<int32_t> text_prompt_ids(const tok::Tokenizer& tok, const std::string& text) {
  tok::EncodeOptions opts;
  opts.add_special_tokens = true;
  return tok.encode(text, opts);
}

ChatPrompter::ChatPrompter(const tok::Tokenizer& tok) : tok_(&tok) {
  std::filesystem::path config = std::filesystem::path(tok.source()) / "tokenizer_config.json";
  if (std::filesystem::is_directory(tok.source()) && std::filesystem::exists(config)) {
    templates_ = ChatTemplates::load(config);
    return;
  }
  if (tok.chat_template().empty()) return;
  if (tok.bos_id() >= 0) special_["bos_token"] = tok.piece(tok.bos_id());
  if (!tok.eos_ids().empty()) special_["eos_token"] = tok.piece(tok.eos_ids().front());
  fallback_ = ChatTemplate::parse(tok.chat_template(), tok.source());
}

std::string ChatPrompter::render(const ChatInputs& inputs) const {
  if (templates_) return templates_->apply(inputs);
  if (!fallback_)
    fail(ErrorCode::kInvalidArgument, "{}: the model has no chat template", tok_->source());
  return fallback_->render(build_chat_context(inputs, special_));
}

std::vector<int32_t> ChatPrompter::ids(const ChatInputs& inputs) const {
  tok::EncodeOptions opts;
  opts.parse_special = true;  // the template writes its markers as text
  return tok_->encode(render(inputs), opts);
}

std::vector<int32_t> chat_prompt_ids(
    const tok::Tokenizer& tok, const std::vector<std::pair<std::string, std::string>>& turns) {
  ChatInputs inputs;
  for (const auto& [role, content] : turns)
    inputs.messages.push_back({{"role", role}, {"content", content}});
  inputs.add_generation_prompt = true;
  return ChatPrompter(tok).ids(inputs);
}

std::vector<int32_t> stop_ids_for(const Model& model, const tok::Tokenizer& tok) {
  const std::vector<int32_t>& from_config = model.config().eos_token_ids;
  return from_config.empty() ? tok.eos_ids() : from_config;
}

}  // namespace cairn
