// Where the model comes from when --model is not given.
#pragma once

#include <string>

namespace cairn {

// `flag` when non-empty; else the default model folder chosen at build time
// (CAIRN_DEFAULT_MODEL). Throws Error(kInvalidArgument) when neither exists.
std::string resolve_model_path(const std::string& flag);

}  // namespace cairn
