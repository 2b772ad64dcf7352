// Prompts into token ids: plain text with the tokenizer's special tokens, and
// conversations through the model's chat template. Shared by the CLI verbs and
// the HTTP server.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace cairn {

// The chat template of one tokenizer, parsed once; thread-safe after construction.
class ChatPrompter {
 public:
  // The template and special tokens of tokenizer_config.json beside the
  // tokenizer, else the template the vocabulary file carries (GGUF's
  // tokenizer.chat_template). A model without one fails only when used.
  explicit ChatPrompter(const tok::Tokenizer& tok);
  bool has_template() const { return templates_ || fallback_; }
  // The rendered prompt text with the generation prompt added as `inputs` says.
  std::string render(const ChatInputs& inputs) const;
  // render(), then encoded with special-token text parsed as special ids.
  std::vector<int32_t> ids(const ChatInputs& inputs) const;

 private:
  const tok::Tokenizer* tok_;
  std::optional<ChatTemplates> templates_;
  std::optional<ChatTemplate> fallback_;
  nlohmann::ordered_json special_ = nlohmann::ordered_json::object();
};

// The tokenizer's own special tokens (BOS where the model wants one) around `text`.
std::vector<int32_t> text_prompt_ids(const tok::Tokenizer& tok, const std::string& text);

// (role, content) turns rendered through the model's chat template with the
// generation prompt added; special-token text in the rendering becomes special ids.
std::vector<int32_t> chat_prompt_ids(const tok::Tokenizer& tok,
                                     const std::vector<std::pair<std::string, std::string>>& turns);

// EOS ids from generation_config.json, else the tokenizer's.
std::vector<int32_t> stop_ids_for(const Model& model, const tok::Tokenizer& tok);

}  // namespace cairn
