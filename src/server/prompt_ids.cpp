#include "cli/prompt_ids.h"

#include <filesystem>

#include "core/error.h"
#include "model/config.h"
#include "tokenizer/chat_template.h"

namespace cairn {

std::vector<int32_t> text_prompt_ids(const tok::Tokenizer& tok, const std::string& text) {
  tok::EncodeOptions opts;
  opts.add_special_tokens = true;
  return tok.encode(text, opts);
}

namespace {

// The template and special tokens: tokenizer_config.json beside the tokenizer,
// else the template the vocabulary file carries (GGUF's tokenizer.chat_template).
std::string render_chat(const tok::Tokenizer& tok, const ChatInputs& inputs) {
  std::filesystem::path config = std::filesystem::path(tok.source()) / "tokenizer_config.json";
  if (std::filesystem::is_directory(tok.source()) && std::filesystem::exists(config))
    return ChatTemplates::load(config).apply(inputs);
  if (tok.chat_template().empty())
    fail(ErrorCode::kInvalidArgument, "{}: the model has no chat template", tok.source());
  nlohmann::ordered_json special = nlohmann::ordered_json::object();
  if (tok.bos_id() >= 0) special["bos_token"] = tok.piece(tok.bos_id());
  if (!tok.eos_ids().empty()) special["eos_token"] = tok.piece(tok.eos_ids().front());
  ChatTemplate t = ChatTemplate::parse(tok.chat_template(), tok.source());
  return t.render(build_chat_context(inputs, special));
}

}  // namespace

std::vector<int32_t> chat_prompt_ids(
    const tok::Tokenizer& tok, const std::vector<std::pair<std::string, std::string>>& turns) {
  ChatInputs inputs;
  for (const auto& [role, content] : turns)
    inputs.messages.push_back({{"role", role}, {"content", content}});
  inputs.add_generation_prompt = true;
  tok::EncodeOptions opts;
  opts.parse_special = true;  // the template writes its markers as text
  return tok.encode(render_chat(tok, inputs), opts);
}

std::vector<int32_t> stop_ids_for(const Model& model, const tok::Tokenizer& tok) {
  const std::vector<int32_t>& from_config = model.config().eos_token_ids;
  return from_config.empty() ? tok.eos_ids() : from_config;
}

}  // namespace cairn
