// Statement execution: text, output expressions, if, for, set, macro, call
// blocks, filter blocks, break and continue.
#include "tokenizer/jinja/interpreter.h"

#include "tokenizer/jinja/lexer.h"
#include "tokenizer/jinja/mutation_log.h"
#include "tokenizer/jinja/value_ops.h"

namespace cairn::jinja {

Value Scope::lookup(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent.get()) {
    auto it = s->variables.find(name);
    if (it != s->variables.end()) return it->second;
  }
  return Value();
}

namespace {

// Counts nesting for the duration of one evaluation.
class DepthGuard {
 public:
  DepthGuard(int& depth, int max_depth) : depth_(depth) {
    if (++depth_ > max_depth) {
      --depth_;
      raise("maximum nesting depth exceeded (recursion too deep)");
    }
  }
  ~DepthGuard() { --depth_; }

 private:
  int& depth_;
};

}  // namespace

void Interpreter::tick() {
  if (++steps_ > limits_.max_steps) raise("evaluation step limit exceeded");
}

void Interpreter::append_output(std::string& out, const std::string& text) {
  if (out.size() + text.size() > limits_.max_output_bytes) raise("output size limit exceeded");
  out += text;
}

std::string Interpreter::render(const std::vector<NodePtr>& program, const ScopePtr& globals) {
  MutationLog log;  // breaks the cycles the render's stores may have made, when it returns
  std::string out;
  if (exec_block(program, globals, out) != Flow::kNormal)
    raise("'break' or 'continue' outside a loop");
  return out;
}

Interpreter::Flow Interpreter::exec_block(const std::vector<NodePtr>& body, const ScopePtr& scope,
                                          std::string& out) {
  for (const auto& node : body) {
    Flow flow = exec(*node, scope, out);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec(const Node& node, const ScopePtr& scope, std::string& out) {
  DepthGuard guard(depth_, limits_.max_depth);
  tick();
  try {
    switch (node.kind) {
      case NodeKind::kText:
        append_output(out, node.text);
        return Flow::kNormal;
      case NodeKind::kComment:
        return Flow::kNormal;
      case NodeKind::kIf:
        return exec_block(eval(*node.kids[0], scope).truthy() ? node.body : node.alt, scope, out);
      case NodeKind::kFor:
        exec_for(node, scope, out);
        return Flow::kNormal;
      case NodeKind::kSet:
        exec_set(node, scope);
        return Flow::kNormal;
      case NodeKind::kMacro:
        scope->set(node.text, make_macro(node));
        return Flow::kNormal;
      case NodeKind::kCallBlock:
        exec_call_block(node, scope, out);
        return Flow::kNormal;
      case NodeKind::kFilterBlock: {
        std::string inner;
        if (exec_block(node.body, scope, inner) != Flow::kNormal)
          raise("'break' or 'continue' in a filter block");
        Value v = apply_filter(*this, Value::string(std::move(inner)), *node.kids[0], scope);
        if (!v.is_none() && !v.is_undefined()) append_output(out, to_output_string(v));
        return Flow::kNormal;
      }
      case NodeKind::kBreak:
        return Flow::kBreak;
      case NodeKind::kContinue:
        return Flow::kContinue;
      default: {
        Value v = eval(node, scope);
        if (!v.is_none() && !v.is_undefined()) append_output(out, to_output_string(v));
        return Flow::kNormal;
      }
    }
  } catch (TemplateError& e) {
    if (!e.has_position()) {
      SourcePos p = position_of(source_, node.offset);
      e.set_position(p.line, p.column);
    }
    throw;
  }
}

void Interpreter::assign_target(const Node& target, const Value& value, const ScopePtr& scope,
                                bool in_loop) {
  if (target.kind == NodeKind::kName) return scope->set(target.text, value);
  if (target.kind != NodeKind::kTuple) raise("Invalid assignment target");
  // Loops unpack lists only (a tuple item is refused, as the reference renderer does).
  if (!value.is_list() || (in_loop && value.is_tuple()))
    raise(std::string("Cannot unpack non-iterable type: ") +
          (value.is_tuple() ? "TupleValue" : value_kind_name(value.kind())));
  const auto& items = value.as_list().items;
  if (items.size() != target.kids.size())
    raise(std::string("Too ") + (target.kids.size() > items.size() ? "few" : "many") +
          " items to unpack");
  for (size_t i = 0; i < items.size(); ++i) {
    if (target.kids[i]->kind != NodeKind::kName) raise("Cannot unpack into a non-name");
    scope->set(target.kids[i]->text, items[i]);
  }
}

void Interpreter::exec_set(const Node& node, const ScopePtr& scope) {
  Value rhs;
  if (node.kids[1]) {
    rhs = eval(*node.kids[1], scope);
  } else {
    std::string inner;
    if (exec_block(node.body, scope, inner) != Flow::kNormal)
      raise("'break' or 'continue' in a set block");
    rhs = Value::string(std::move(inner));
  }
  const Node& target = *node.kids[0];
  if (target.kind != NodeKind::kMember) return assign_target(target, rhs, scope, false);
  Value object = eval(*target.kids[0], scope);
  if (!object.is(ValueKind::kNamespace)) raise("cannot assign attribute on non-namespace object");
  if (target.flag || target.kids[1]->kind != NodeKind::kName)
    raise("Cannot assign to member with non-identifier property");
  object.as_dict().set(target.kids[1]->text, rhs);
  MutationLog::note(object);
}

namespace {

Value loop_info(const std::vector<Value>& items, size_t i) {
  int64_t n = static_cast<int64_t>(items.size());
  int64_t k = static_cast<int64_t>(i);
  DictData loop;
  loop.set("index", Value::integer(k + 1));
  loop.set("index0", Value::integer(k));
  loop.set("revindex", Value::integer(n - k));
  loop.set("revindex0", Value::integer(n - k - 1));
  loop.set("first", Value::boolean(k == 0));
  loop.set("last", Value::boolean(k == n - 1));
  loop.set("length", Value::integer(n));
  loop.set("previtem", k > 0 ? items[i - 1] : Value());
  loop.set("nextitem", k < n - 1 ? items[i + 1] : Value());
  loop.set("cycle", Value::function(
                        [k](const CallArgs& args, const ScopePtr&) {
                          if (args.positional.empty())
                            raise("loop.cycle() needs at least one value");
                          return args.positional[static_cast<size_t>(k) % args.positional.size()];
                        },
                        "cycle"));
  return Value::dict(std::move(loop));
}

}  // namespace

void Interpreter::exec_for(const Node& node, const ScopePtr& scope, std::string& out) {
  auto loop_scope = std::make_shared<Scope>(scope);
  const Node& iter_node = *node.kids[1];
  const Node* condition = nullptr;
  Value iterable;
  if (iter_node.kind == NodeKind::kSelect) {
    iterable = eval(*iter_node.kids[0], loop_scope);
    condition = iter_node.kids[1].get();
  } else {
    iterable = eval(iter_node, loop_scope);
  }
  if (!iterable.is_list() && !iterable.is_dict())
    raise(std::string("Expected iterable or object type in for loop: got ") +
          value_kind_name(iterable.kind()));
  std::vector<Value> all;
  if (iterable.is_dict()) {
    for (const auto& entry : iterable.as_dict().entries) all.push_back(Value::string(entry.first));
  } else {
    all = iterable.as_list().items;
  }
  std::vector<Value> items;
  for (const Value& item : all) {
    if (condition) {
      auto test_scope = std::make_shared<Scope>(loop_scope);
      assign_target(*node.kids[0], item, test_scope, true);
      if (!eval(*condition, test_scope).truthy()) continue;
    }
    items.push_back(item);
  }
  for (size_t i = 0; i < items.size(); ++i) {
    tick();
    loop_scope->set("loop", loop_info(items, i));
    assign_target(*node.kids[0], items[i], loop_scope, true);
    if (exec_block(node.body, loop_scope, out) == Flow::kBreak) break;
  }
  if (items.empty()) exec_block(node.alt, loop_scope, out);
}

void Interpreter::bind_arguments(const std::string& name, const std::vector<NodePtr>& params,
                                 bool uses_kwargs, bool uses_varargs, const CallArgs& args,
                                 const ScopePtr& scope) {
  auto keywords = args.keywords;
  std::vector<std::pair<std::string, const Node*>> pending_defaults;
  for (size_t i = 0; i < params.size(); ++i) {
    const Node& param = *params[i];
    const std::string& pname = param.text;
    std::optional<Value> value;
    if (i < args.positional.size()) value = args.positional[i];
    for (auto it = keywords.begin(); !value && it != keywords.end(); ++it) {
      if (it->first != pname) continue;
      value = it->second;
      keywords.erase(it);
      break;
    }
    if (!value && param.kind == NodeKind::kKeyword)
      pending_defaults.emplace_back(pname, param.kids[0].get());
    scope->set(pname, value.value_or(Value()));
  }
  if (uses_kwargs) {
    DictData kw;
    for (auto& [k, v] : keywords) kw.set(k, v);
    scope->set("kwargs", Value::dict(std::move(kw)));
  } else if (!keywords.empty()) {
    raise("macro " + name + " takes no keyword argument '" + keywords.front().first + "'");
  }
  if (uses_varargs) {
    std::vector<Value> rest;
    for (size_t i = params.size(); i < args.positional.size(); ++i)
      rest.push_back(args.positional[i]);
    scope->set("varargs", Value::list(std::move(rest)));
  } else if (args.positional.size() > params.size()) {
    raise("macro " + name + " takes not more than " + std::to_string(params.size()) +
          " argument(s)");
  }
  for (const auto& [pname, default_node] : pending_defaults)
    scope->set(pname, eval(*default_node, scope));
}

Value Interpreter::make_macro(const Node& node) {
  const Node* macro = &node;
  return Value::function(
      [this, macro](const CallArgs& args, const ScopePtr& call_scope) {
        auto macro_scope = std::make_shared<Scope>(call_scope);
        bind_arguments("'" + macro->text + "'", macro->args, macro->flag, macro->flag2, args,
                       macro_scope);
        std::string out;
        if (exec_block(macro->body, macro_scope, out) != Flow::kNormal)
          raise("'break' or 'continue' outside a loop");
        return Value::string(std::move(out));
      },
      node.text);
}

void Interpreter::exec_call_block(const Node& node, const ScopePtr& scope, std::string& out) {
  const Node* block = &node;
  Value caller = Value::function(
      [this, block, scope](const CallArgs& args, const ScopePtr&) {
        auto block_scope = std::make_shared<Scope>(scope);
        bind_arguments("None", block->args, block->flag, block->flag2, args, block_scope);
        std::string inner;
        if (exec_block(block->body, block_scope, inner) != Flow::kNormal)
          raise("'break' or 'continue' outside a loop");
        return Value::string(std::move(inner));
      },
      "caller");
  const Node& call = *node.kids[0];
  CallArgs args = eval_args(call.args, scope);
  Value fn = eval(*call.kids[0], scope);
  auto call_scope = std::make_shared<Scope>(scope);
  call_scope->set("caller", caller);
  Value v = this->call(fn, args, call_scope);
  if (!v.is_none() && !v.is_undefined()) append_output(out, to_output_string(v));
}

Value Interpreter::call(const Value& fn, const CallArgs& args, const ScopePtr& scope) {
  if (!fn.is(ValueKind::kFunction))
    raise(std::string("Cannot call something that is not a function: got ") +
          value_kind_name(fn.kind()));
  DepthGuard guard(depth_, limits_.max_depth);
  return fn.as_function()(args, scope);
}

}  // namespace cairn::jinja
