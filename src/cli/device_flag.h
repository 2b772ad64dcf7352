// `--device cuda|cpu|auto`: where a verb runs its model. auto (the default)
// picks the GPU when this build has the CUDA backend and a GPU is present.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/storage.h"

namespace cairn {

void add_device_flag(CLI::App& cmd, std::string& device);

// The device `flag` names. Error(kUnsupported) for cuda without a GPU or a
// CUDA build; Error(kInvalidArgument) for another word.
Device resolve_device(const std::string& flag);

}  // namespace cairn
