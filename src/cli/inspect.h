// `cairn inspect PATH`: a model's architecture, parameter count, bytes by dtype,
// context length and layer kinds, read from its config and weight headers
// without loading the weights.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "model/config.h"

namespace cairn {

void register_inspect(CLI::App& app);

// The text `cairn inspect` prints for a configuration (one "key: value" per line).
std::string describe_model(const ModelConfig& c);

}  // namespace cairn
