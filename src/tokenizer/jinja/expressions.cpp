// Expression evaluation: literals, names, calls, member access and slices,
// unary and binary operators, tests, conditional expressions.
#include <cmath>

#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/lexer.h"
#include "tokenizer/jinja/text.h"
#include "tokenizer/jinja/value_ops.h"

namespace cairn::jinja {

Value Interpreter::eval(const Node& node, const ScopePtr& scope) {
  if (++depth_ > limits_.max_depth) {
    --depth_;
    raise("maximum nesting depth exceeded (recursion too deep)");
  }
  tick();
  try {
    Value v = eval_expression(node, scope);
    --depth_;
    return v;
  } catch (TemplateError& e) {
    --depth_;
    if (!e.has_position()) {
      SourcePos p = position_of(source_, node.offset);
      e.set_position(p.line, p.column);
    }
    throw;
  }
}

Value Interpreter::eval_expression(const Node& node, const ScopePtr& scope) {
  switch (node.kind) {
    case NodeKind::kInteger:
      return Value::integer(node.int_value);
    case NodeKind::kFloat:
      return Value::floating(node.float_value);
    case NodeKind::kString:
      return Value::string(node.text);
    case NodeKind::kList:
    case NodeKind::kTuple: {
      std::vector<Value> items;
      for (const auto& kid : node.kids) items.push_back(eval(*kid, scope));
      return Value::list(std::move(items), node.kind == NodeKind::kTuple);
    }
    case NodeKind::kDict:
      return eval_literal_dict(node, scope);
    case NodeKind::kName:
      return scope->lookup(node.text);
    case NodeKind::kCall: {
      CallArgs args = eval_args(node.args, scope);
      return call(eval(*node.kids[0], scope), args, scope);
    }
    case NodeKind::kMember:
      return eval_member(node, scope);
    case NodeKind::kUnary:
      return eval_unary(node, scope);
    case NodeKind::kBinary:
      return eval_binary(node, scope);
    case NodeKind::kFilter:
      return apply_filter(*this, eval(*node.kids[0], scope), *node.kids[1], scope);
    case NodeKind::kTest:
      return eval_test(node, scope);
    case NodeKind::kSelect:
      return eval(*node.kids[1], scope).truthy() ? eval(*node.kids[0], scope) : Value();
    case NodeKind::kTernary:
      return eval(*node.kids[eval(*node.kids[0], scope).truthy() ? 1 : 2], scope);
    default:
      raise("This construct cannot be used as an expression");
  }
}

Value Interpreter::eval_literal_dict(const Node& node, const ScopePtr& scope) {
  DictData data;
  for (size_t i = 0; i + 1 < node.kids.size(); i += 2) {
    Value key = eval(*node.kids[i], scope);
    if (!key.is(ValueKind::kString))
      raise(std::string("Object keys must be strings: got ") + value_kind_name(key.kind()));
    data.set(key.as_string(), eval(*node.kids[i + 1], scope));
  }
  return Value::dict(std::move(data));
}

CallArgs Interpreter::eval_args(const std::vector<NodePtr>& args, const ScopePtr& scope) {
  CallArgs out;
  for (const auto& arg : args) {
    if (arg->kind == NodeKind::kKeyword || arg->kind == NodeKind::kKwSpread) continue;
    if (arg->kind != NodeKind::kSpread) {
      out.positional.push_back(eval(*arg, scope));
      continue;
    }
    Value v = eval(*arg->kids[0], scope);
    if (!v.is_list())
      raise(std::string("Cannot unpack non-iterable type: ") + value_kind_name(v.kind()));
    for (const Value& item : v.as_list().items) out.positional.push_back(item);
  }
  auto add = [&](const std::string& key, Value v) {
    if (out.keyword(key)) raise("Got multiple values for keyword argument '" + key + "'");
    out.keywords.emplace_back(key, std::move(v));
  };
  for (const auto& arg : args) {
    if (arg->kind == NodeKind::kKeyword) add(arg->text, eval(*arg->kids[0], scope));
    if (arg->kind != NodeKind::kKwSpread) continue;
    Value v = eval(*arg->kids[0], scope);
    if (!v.is_dict())
      raise(std::string("Argument after ** must be a mapping, not ") + value_kind_name(v.kind()));
    for (const auto& [k, item] : v.as_dict().entries) add(k, item);
  }
  return out;
}

Value Interpreter::eval_member(const Node& node, const ScopePtr& scope) {
  Value object = eval(*node.kids[0], scope);
  const Node& prop_node = *node.kids[1];
  Value prop;
  if (node.flag) {
    if (prop_node.kind == NodeKind::kSlice) return eval_slice(object, prop_node, scope);
    prop = eval(prop_node, scope);
  } else if (prop_node.kind == NodeKind::kInteger) {
    prop = Value::integer(prop_node.int_value);
  } else {
    prop = Value::string(prop_node.text);
  }
  auto key_error = [&](const char* what) {
    raise(std::string("Cannot access property with ") + what + ": got " +
          value_kind_name(prop.kind()));
  };
  if (object.is_attribute_container()) {
    if (!prop.is(ValueKind::kString)) key_error("non-string");
    if (const Value* v = object.as_dict().find(prop.as_string())) return *v;
    return object.is_dict() ? member_builtin(object, prop.as_string()) : Value();
  }
  if (object.is_list() || object.is(ValueKind::kString)) {
    if (prop.is(ValueKind::kString)) return member_builtin(object, prop.as_string());
    if (!prop.is(ValueKind::kInt)) key_error("non-string/non-number");
    int64_t i = prop.as_int();
    if (object.is_list()) {
      const auto& items = object.as_list().items;
      int64_t n = static_cast<int64_t>(items.size());
      if (i < 0) i += n;
      return (i >= 0 && i < n) ? items[static_cast<size_t>(i)] : Value();
    }
    auto chars = split_code_points(object.as_string());
    int64_t n = static_cast<int64_t>(chars.size());
    if (i < 0) i += n;
    return (i >= 0 && i < n) ? Value::string(chars[static_cast<size_t>(i)]) : Value();
  }
  if (!prop.is(ValueKind::kString)) key_error("non-string");
  return member_builtin(object, prop.as_string());
}

namespace {

// Python slice bounds over n items; step != 0.
std::vector<size_t> slice_indices(int64_t n, std::optional<int64_t> start,
                                  std::optional<int64_t> stop, int64_t step) {
  std::vector<size_t> out;
  int64_t lo, hi;
  if (step > 0) {
    lo = start ? (*start < 0 ? std::max<int64_t>(n + *start, 0) : std::min(*start, n)) : 0;
    hi = stop ? (*stop < 0 ? std::max<int64_t>(n + *stop, 0) : std::min(*stop, n)) : n;
    for (int64_t i = lo; i < hi; i += step) out.push_back(static_cast<size_t>(i));
  } else {
    lo = start ? (*start < 0 ? std::max<int64_t>(n + *start, -1) : std::min(*start, n - 1)) : n - 1;
    hi = stop ? (*stop < -1 ? std::max<int64_t>(n + *stop, -1) : std::min(*stop, n - 1)) : -1;
    for (int64_t i = lo; i > hi; i += step) out.push_back(static_cast<size_t>(i));
  }
  return out;
}

}  // namespace

Value Interpreter::eval_slice(const Value& object, const Node& slice, const ScopePtr& scope) {
  if (!object.is_list() && !object.is(ValueKind::kString))
    raise("Slice object must be an array or string");
  std::optional<int64_t> parts[3];
  static const char* kNames[3] = {"start", "stop", "step"};
  for (size_t i = 0; i < 3; ++i) {
    const Node* kid = slice.kid(i);
    if (!kid) continue;
    Value v = eval(*kid, scope);
    if (v.is_undefined()) continue;
    if (!v.is(ValueKind::kInt))
      raise(std::string("Slice ") + kNames[i] + " must be numeric or undefined");
    parts[i] = v.as_int();
  }
  int64_t step = parts[2].value_or(1);
  if (step == 0) raise("slice step cannot be zero");
  if (object.is_list()) {
    const auto& items = object.as_list().items;
    std::vector<Value> out;
    for (size_t i : slice_indices(static_cast<int64_t>(items.size()), parts[0], parts[1], step))
      out.push_back(items[i]);
    return Value::list(std::move(out));
  }
  auto chars = split_code_points(object.as_string());
  std::string out;
  for (size_t i : slice_indices(static_cast<int64_t>(chars.size()), parts[0], parts[1], step))
    out += chars[i];
  return Value::string(std::move(out));
}

Value Interpreter::eval_unary(const Node& node, const ScopePtr& scope) {
  Value v = eval(*node.kids[0], scope);
  if (node.text == "not") return Value::boolean(!v.truthy());
  bool negate = node.text == "-";
  if (v.is(ValueKind::kFloat)) return Value::floating(negate ? -v.as_float() : v.as_float());
  if (v.is(ValueKind::kInt) || v.is(ValueKind::kBool)) {
    int64_t i = v.is(ValueKind::kInt) ? v.as_int() : (v.as_bool() ? 1 : 0);
    if (negate && i == INT64_MIN) raise("integer overflow");
    return Value::integer(negate ? -i : i);
  }
  raise("Unknown operator \"" + node.text + "\" for " + value_kind_name(v.kind()));
}

Value Interpreter::eval_test(const Node& node, const ScopePtr& scope) {
  Value operand = eval(*node.kids[0], scope);
  std::vector<Value> args;
  if (!node.args.empty()) args = eval_args(node.args, scope).positional;
  bool result = apply_test(node.text, operand, args);
  return Value::boolean(node.flag ? !result : result);
}

}  // namespace cairn::jinja
