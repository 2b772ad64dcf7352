// The tree-walking interpreter: renders statements into text and evaluates
// expressions into values. Scoping follows the renderer chat templates are
// written against: a for loop opens one scope for the whole loop, a macro
// call opens a scope whose parent is the caller's scope, `if` opens none.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/value.h"

namespace cairn::jinja {

struct Scope {
  ScopePtr parent;
  std::unordered_map<std::string, Value> variables;

  explicit Scope(ScopePtr p = nullptr) : parent(std::move(p)) {}
  // The variable, searching enclosing scopes; undefined when absent.
  Value lookup(const std::string& name) const;
  void set(const std::string& name, Value value) { variables[name] = std::move(value); }
};

struct RenderLimits {
  size_t max_output_bytes = size_t{32} << 20;
  int max_depth = 400;              // nested evaluations (macro recursion included)
  uint64_t max_steps = 50'000'000;  // evaluated nodes
};

class Interpreter {
 public:
  explicit Interpreter(std::string_view source, RenderLimits limits = {})
      : source_(source), limits_(limits) {}

  std::string render(const std::vector<NodePtr>& program, const ScopePtr& globals);
  Value eval(const Node& node, const ScopePtr& scope);
  // Evaluates call arguments: positional (with *spread) and keyword (with **spread).
  CallArgs eval_args(const std::vector<NodePtr>& args, const ScopePtr& scope);
  Value call(const Value& fn, const CallArgs& args, const ScopePtr& scope);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  // Appends the block's output to `out`; a break/continue stops the block.
  Flow exec_block(const std::vector<NodePtr>& body, const ScopePtr& scope, std::string& out);
  Flow exec(const Node& node, const ScopePtr& scope, std::string& out);
  void exec_set(const Node& node, const ScopePtr& scope);
  void exec_for(const Node& node, const ScopePtr& scope, std::string& out);
  Value make_macro(const Node& node);
  void exec_call_block(const Node& node, const ScopePtr& scope, std::string& out);
  void bind_arguments(const std::string& name, const std::vector<NodePtr>& params, bool uses_kwargs,
                      bool uses_varargs, const CallArgs& args, const ScopePtr& scope);
  void assign_target(const Node& target, const Value& value, const ScopePtr& scope, bool in_loop);

  Value eval_expression(const Node& node, const ScopePtr& scope);
  Value eval_member(const Node& node, const ScopePtr& scope);
  Value eval_slice(const Value& object, const Node& slice, const ScopePtr& scope);
  Value eval_binary(const Node& node, const ScopePtr& scope);
  Value eval_unary(const Node& node, const ScopePtr& scope);
  Value eval_test(const Node& node, const ScopePtr& scope);
  Value eval_literal_dict(const Node& node, const ScopePtr& scope);
  void append_output(std::string& out, const std::string& text);
  void tick();

  std::string_view source_;
  RenderLimits limits_;
  int depth_ = 0;
  uint64_t steps_ = 0;
};

// Applies `operand | filter` where `filter` is a name or a call node.
Value apply_filter(Interpreter& interp, const Value& operand, const Node& filter,
                   const ScopePtr& scope);
// `value is name(args...)`; raises for an unknown test.
bool apply_test(const std::string& name, const Value& value, const std::vector<Value>& args);
// Attribute of a non-container value: string, dict and list methods (`s.strip`, `d.items`).
Value member_builtin(const Value& object, const std::string& name);

struct GlobalOptions {
  std::optional<std::time_t> now;  // strftime_now's clock; unset: the system clock
};
// Defines true/false/none (both cases), range, namespace, dict, raise_exception, strftime_now.
void install_globals(Scope& scope, const GlobalOptions& options);

}  // namespace cairn::jinja
