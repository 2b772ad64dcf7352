// Each verb file defines register_<verb>(app): its flags and its callback.
#pragma once

#include <CLI/CLI.hpp>

namespace cairn {

void register_verbs(CLI::App& app);

}  // namespace cairn
