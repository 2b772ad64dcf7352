#include "tokenizer/jinja/template.h"

#include "core/error.h"
#include "tokenizer/jinja/lexer.h"
#include "tokenizer/jinja/parser.h"
#include "tokenizer/jinja/value_ops.h"

namespace cairn::jinja {

struct Template::State {
  std::string name;
  std::string source;
  std::vector<NodePtr> program;
};

namespace {

std::string describe(const std::string& name, const TemplateError& e) {
  if (!e.has_position()) return fmt::format("template '{}': {}", name, e.message());
  return fmt::format("template '{}': line {}, column {}: {}", name, e.line(), e.column(),
                     e.message());
}

}  // namespace

Template Template::parse(std::string source, std::string name) {
  auto state = std::make_shared<State>();
  state->name = std::move(name);
  state->source = std::move(source);
  try {
    state->program = jinja::parse(tokenize(state->source), state->source);
  } catch (const TemplateError& e) {
    fail(ErrorCode::kBadFile, "{}", describe(state->name, e));
  }
  return Template(std::move(state));
}

std::string Template::render(const nlohmann::ordered_json& context,
                             const RenderOptions& options) const {
  if (!context.is_object() && !context.is_null())
    fail(ErrorCode::kInvalidArgument, "template '{}': the render context must be a JSON object",
         name());
  try {
    auto globals = std::make_shared<Scope>();
    install_globals(*globals, GlobalOptions{options.now});
    auto scope = std::make_shared<Scope>(globals);
    if (context.is_object()) {
      Value values = from_json(context);
      for (const auto& [key, value] : values.as_dict().entries) scope->set(key, value);
    }
    Interpreter interpreter(state_->source, options.limits);
    return interpreter.render(state_->program, scope);
  } catch (const TemplateError& e) {
    fail(ErrorCode::kInvalidArgument, "{}", describe(state_->name, e));
  }
}

const std::string& Template::name() const {
  return state_->name;
}
const std::string& Template::source() const {
  return state_->source;
}

}  // namespace cairn::jinja
