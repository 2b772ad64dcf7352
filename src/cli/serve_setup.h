// What `cairn serve` derives from the loaded model: the parse context (sampling
// defaults from generation_config.json, EOS ids, context length) and a
// fingerprint of the weights, config and tokenizer.
#pragma once

#include <string>

#include "cli/loaded_model.h"
#include "server/parsed_request.h"

namespace cairn {

server::ParseContext parse_context_for(const LoadedModel& m, const ChatPrompter& prompter);

// 16 hex digits over config.json, generation_config.json, the tokenizer files
// and the weight files' names and sizes.
std::string fingerprint_files(const std::string& model_path);

// "512M", "1G", "1048576" → bytes. Throws Error(kInvalidArgument) naming `flag`.
int64_t parse_bytes(const std::string& text, const std::string& flag);

}  // namespace cairn
