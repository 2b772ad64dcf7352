// Turning a CLI prompt into token ids, and the ids that end a generation.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace cairn {

// The tokenizer's own special tokens (BOS where the model wants one) around `text`.
std::vector<int32_t> text_prompt_ids(const tok::Tokenizer& tok, const std::string& text);

// (role, content) turns rendered through the model's chat template with the
// generation prompt added; special-token text in the rendering becomes special ids.
std::vector<int32_t> chat_prompt_ids(const tok::Tokenizer& tok,
                                     const std::vector<std::pair<std::string, std::string>>& turns);

// EOS ids from generation_config.json, else the tokenizer's.
std::vector<int32_t> stop_ids_for(const Model& model, const tok::Tokenizer& tok);

}  // namespace cairn
