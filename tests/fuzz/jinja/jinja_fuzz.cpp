// Fuzzes template parsing and rendering: the input is template source,
// rendered over a fixed chat context. Any cairn::Error is an accepted
// outcome; crashes, sanitizer reports, hangs and unbounded memory are not.
// Run: jinja_fuzz -dict=tests/fuzz/jinja/jinja.dict CORPUS_DIR
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "tokenizer/jinja/template.h"

namespace {

const nlohmann::ordered_json& context() {
  static const nlohmann::ordered_json kContext = nlohmann::ordered_json::parse(R"({
    "bos_token": "<s>", "eos_token": "</s>", "add_generation_prompt": true, "enable_thinking": false,
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Hi \u00e9"}]},
      {"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1, "b": [true, 2.5]}}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "{\"ok\": 1}"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
  })");
  return kContext;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string source(reinterpret_cast<const char*>(data), size);
  cairn::jinja::RenderOptions options;
  options.now = 0;
  options.limits.max_output_bytes = 1 << 20;
  options.limits.max_steps = 200'000;
  options.limits.max_depth = 200;
  try {
    auto tmpl = cairn::jinja::Template::parse(source, "fuzz");
    (void)tmpl.render(context(), options);
  } catch (const cairn::Error&) {
  }
  return 0;
}
