#include "cli/prompt_ids.h"

#include "core/error.h"
#include "model/config.h"

namespace cairn {

std::vector<int32_t> text_prompt_ids(const tok::Tokenizer& tok, const std::string& text) {
  tok::EncodeOptions opts;
  opts.add_special_tokens = true;
  return tok.encode(text, opts);
}

std::vector<int32_t> chat_prompt_ids(const tok::Tokenizer& tok,
                                     const std::vector<std::pair<std::string, std::string>>&) {
  fail(ErrorCode::kUnsupported, "{}: chat templates are not available in this build", tok.source());
}

std::vector<int32_t> stop_ids_for(const Model& model, const tok::Tokenizer& tok) {
  const std::vector<int32_t>& from_config = model.config().eos_token_ids;
  return from_config.empty() ? tok.eos_ids() : from_config;
}

}  // namespace cairn
