#include "tokenizer/gguf_pre.h"

#include <algorithm>

#include "core/error.h"

namespace cairn::tok {
namespace {

// The patterns as the models' own tokenizer.json files write them.
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen35 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kGpt2NoTail =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";

bool is_one_of(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

}  // namespace

GgufPre gguf_pre_config(const std::string& pre, const std::string& path) {
  GgufPre c;
  if (is_one_of(pre, {"llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral", "dbrx", "smaug-bpe",
                      "chatglm-bpe", "glm4"})) {
    c.patterns = {kLlama3};
    c.ignore_merges = is_one_of(pre, {"llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral"});
    c.add_bos = c.ignore_merges;
  } else if (is_one_of(pre, {"gpt-2", "phi-2", "mpt", "olmo", "jais", "mellum", "modern-bert",
                             "roberta-bpe", "trillion", "granite-docling"})) {
    c.patterns = {kGpt2};
  } else if (is_one_of(pre, {"qwen2", "deepseek-r1-qwen", "stablelm2", "hunyuan", "solar-open"})) {
    c.patterns = {kQwen2};
  } else if (pre == "qwen35") {
    c.patterns = {kQwen35};
  } else if (is_one_of(pre, {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone",
                             "minerva-7b"})) {
    c.patterns = {R"(\p{N})", kGpt2NoTail};
  } else if (pre == "falcon") {
    c.patterns = {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2NoTail, "[0-9][0-9][0-9]"};
  } else if (pre == "default") {
    c.patterns = {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2NoTail, R"(\p{N}+)", "[0-9][0-9][0-9]"};
  } else if (pre == "gemma4") {
    c.patterns = {R"([^\n]+|[\n]+)"};
    c.byte_level = false;
    c.escape_spaces = true;
  } else {
    fail(ErrorCode::kUnsupported,
         "{}: key 'tokenizer.ggml.pre' is '{}', a pre-tokenizer cairn does not know", path, pre);
  }
  return c;
}

}  // namespace cairn::tok
