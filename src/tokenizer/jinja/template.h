// A parsed Jinja template, rendered against a JSON context. Templates render
// as Hugging Face renders chat templates (trim_blocks and lstrip_blocks on).
// Every lexing, parsing or rendering failure is a cairn::Error whose message
// names the template, the line and the column.
#pragma once

#include <nlohmann/json.hpp>

#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include "tokenizer/jinja/interpreter.h"

namespace cairn::jinja {

struct RenderOptions {
  std::optional<std::time_t> now;  // pins strftime_now() (read as UTC); unset: local time now
  RenderLimits limits;
};

class Template {
 public:
  // Throws cairn::Error (kBadFile) naming `name`, line and column on a syntax error.
  static Template parse(std::string source, std::string name);

  // Throws cairn::Error (kInvalidArgument) on a render error, including
  // raise_exception() called by the template.
  std::string render(const nlohmann::ordered_json& context,
                     const RenderOptions& options = {}) const;

  const std::string& name() const;
  const std::string& source() const;

 private:
  struct State;
  explicit Template(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
};

}  // namespace cairn::jinja
