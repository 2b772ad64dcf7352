// What `cairn serve` derives from the loaded model: the parse context (sampling
// defaults from generation_config.json, EOS ids, context length).
#pragma once

#include <string>

#include "cli/loaded_model.h"
#include "server/parsed_request.h"

namespace cairn {

server::ParseContext parse_context_for(const LoadedModel& m, const ChatPrompter& prompter);

}  // namespace cairn
