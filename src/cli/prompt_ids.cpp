#include "cli/prompt_ids.h"

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

// The tokenizer's BOS and first EOS as the template variables bos_token, eos_token.
nlohmann::ordered_json special_token_texts(const tok::Tokenizer& tok) {
  nlohmann::ordered_json s = nlohmann::ordered_json::object();
  if (tok.bos_id() >= 0) s["bos_token"] = tok.piece(tok.bos_id());
  if (!tok.eos_ids().empty()) s["eos_token"] = tok.piece(tok.eos_ids().front());
  return s;
}

}  // namespace

std::vector<int32_t> chat_prompt_ids(
    const tok::Tokenizer& tok, const std::vector<std::pair<std::string, std::string>>& turns) {
  if (tok.chat_template().empty())
    fail(ErrorCode::kUnsupported, "{}: the model has no chat template (tokenizer_config.json)",
         tok.source());
  ChatTemplate t = ChatTemplate::parse(tok.chat_template(), tok.source() + ": chat_template");
  ChatInputs in;
  for (const auto& [role, content] : turns)
    in.messages.push_back({{"role", role}, {"content", content}});
  std::string text = t.render(build_chat_context(in, special_token_texts(tok)));
  tok::EncodeOptions opts;
  opts.parse_special = true;  // the template writes BOS and the chat markers itself
  return tok.encode(text, opts);
}

std::vector<int32_t> stop_ids_for(const Model& model, const tok::Tokenizer& tok) {
  const std::vector<int32_t>& from_config = model.config().eos_token_ids;
  return from_config.empty() ? tok.eos_ids() : from_config;
}

}  // namespace cairn
