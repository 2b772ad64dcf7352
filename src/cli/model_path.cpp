#include "cli/model_path.h"

#include <filesystem>

#include "core/error.h"

namespace cairn {

std::string resolve_model_path(const std::string& flag) {
  if (!flag.empty()) return flag;
  std::string fallback = CAIRN_DEFAULT_MODEL;
  if (std::filesystem::exists(fallback)) return fallback;
  fail(ErrorCode::kInvalidArgument, "no --model given and the default model {} is missing",
       fallback);
}

}  // namespace cairn
