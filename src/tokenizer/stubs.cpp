#include "core/error.h"
#include "tokenizer/loaders.h"
namespace cairn::tok {
std::unique_ptr<Pipeline> load_hf(const std::string& json_path, const std::string&) {
  fail(ErrorCode::kUnsupported, "{}: tokenizer.json is not read yet", json_path);
}
}  // namespace cairn::tok
