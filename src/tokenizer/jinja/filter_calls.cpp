// Filters written with arguments: tojson(...), join(sep), default(v, boolean),
// int/float(default), sort(...), selectattr/rejectattr, map, indent, replace,
// round, and dict methods used as filters (dictsort(...)).
#include <algorithm>

#include "tokenizer/jinja/filters.h"
#include "tokenizer/jinja/text.h"
#include "tokenizer/jinja/value_ops.h"

namespace cairn::jinja {

namespace {

const Value& arg_or(const CallArgs& args, size_t n, const char* name, const Value& fallback) {
  const Value* v = args.get(n, name);
  return v ? *v : fallback;
}

bool bool_arg(const CallArgs& args, size_t n, const char* name, bool fallback, const char* error) {
  const Value* v = args.get(n, name);
  if (!v) return fallback;
  if (!v->is(ValueKind::kBool)) raise(error);
  return v->as_bool();
}

Value tojson_filter(const Value& operand, const CallArgs& args) {
  JsonOptions options;
  const Value* indent = args.keyword("indent");
  if (indent && !indent->is(ValueKind::kInt) && !indent->is_none())
    raise("If set, indent must be a number");
  if (indent && indent->is(ValueKind::kInt)) {
    if (indent->as_int() < 0 || indent->as_int() > 64) raise("tojson: indent out of range");
    options.indent = indent->as_int();
  }
  const Value* ascii = args.keyword("ensure_ascii");
  if (ascii && !ascii->is(ValueKind::kBool)) raise("If set, ensure_ascii must be a boolean");
  options.ensure_ascii = ascii && ascii->as_bool();
  const Value* sort = args.keyword("sort_keys");
  if (sort && !sort->is(ValueKind::kBool)) raise("If set, sort_keys must be a boolean");
  options.sort_keys = sort && sort->as_bool();
  const Value* seps = args.keyword("separators");
  if (seps && seps->is_list()) {
    const auto& items = seps->as_list().items;
    if (items.size() != 2 || !items[0].is(ValueKind::kString) || !items[1].is(ValueKind::kString))
      raise("separators must be a tuple of two strings");
    options.separators = std::make_pair(items[0].as_string(), items[1].as_string());
  } else if (seps && !seps->is_none()) {
    raise("If set, separators must be a tuple of two strings");
  }
  return Value::string(to_json_text(operand, options));
}

Value join_filter(const Value& operand, const CallArgs& args) {
  std::vector<std::string> parts;
  if (operand.is(ValueKind::kString)) {
    parts = split_code_points(operand.as_string());
  } else if (operand.is_list()) {
    for (const Value& v : operand.as_list().items) parts.push_back(to_join_string(v));
  } else {
    raise(std::string("Cannot apply filter \"join\" to type: ") + value_kind_name(operand.kind()));
  }
  Value sep = arg_or(args, 0, "separator", Value::string(""));
  if (!sep.is(ValueKind::kString)) raise("separator must be a string");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep.as_string();
    out += parts[i];
    if (out.size() > kMaxStringBytes) raise("string too large");
  }
  return Value::string(std::move(out));
}

Value number_conversion(const std::string& name, const Value& operand, const CallArgs& args) {
  bool to_int = name == "int";
  Value fallback = arg_or(args, 0, "default", to_int ? Value::integer(0) : Value::floating(0));
  if (operand.is(ValueKind::kString)) {
    double d = 0;
    bool ok = to_int ? parse_int_prefix(operand.as_string(), d)
                     : parse_float_prefix(operand.as_string(), d);
    if (!ok) return fallback;
    if (to_int && std::fabs(d) > 9.2e18) raise("int filter: value out of range");
    return to_int ? Value::integer(static_cast<int64_t>(d)) : Value::floating(d);
  }
  if (operand.is_number()) return operand;
  if (operand.is(ValueKind::kBool))
    return to_int ? Value::integer(operand.as_bool()) : Value::floating(operand.as_bool());
  raise("Cannot apply filter \"" + name + "\" to type: " + value_kind_name(operand.kind()));
}

Value default_filter(const Value& operand, const CallArgs& args) {
  Value fallback = args.positional.empty() ? Value::string("") : args.positional[0];
  bool boolean = bool_arg(args, 1, "boolean", false, "`default` filter flag must be a boolean");
  if (operand.is_undefined() || (boolean && !operand.truthy())) return fallback;
  return operand;
}

Value select_filter(const std::string& name, Interpreter&, const Value& operand, const Node& call,
                    const CallArgs& args) {
  bool select = name == "selectattr";
  for (const Value& item : operand.as_list().items)
    if (!item.is_attribute_container())
      raise("`" + name + "` can only be applied to array of objects");
  for (const auto& arg : call.args)
    if (arg->kind != NodeKind::kString) raise("arguments of `" + name + "` must be strings");
  if (args.positional.empty()) raise("`" + name + "` needs an attribute name");
  const std::string& attr = args.positional[0].as_string();
  std::vector<Value> out;
  for (const Value& item : operand.as_list().items) {
    const Value* a = item.as_dict().find(attr);
    bool result = false;
    if (a && args.positional.size() > 1) {
      std::vector<Value> test_args(args.positional.begin() + 2, args.positional.end());
      result = apply_test(args.positional[1].as_string(), *a, test_args);
    } else if (a) {
      result = a->truthy();
    }
    if (result == select) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value map_filter(Interpreter& interp, const Value& operand, const CallArgs& args,
                 const ScopePtr& scope) {
  std::vector<Value> out;
  if (const Value* attr = args.keyword("attribute")) {
    if (!attr->is(ValueKind::kString)) raise("attribute must be a string");
    const Value* fallback = args.keyword("default");
    for (const Value& item : operand.as_list().items) {
      if (!item.is_attribute_container()) raise("items in map must be an object");
      Value v = attribute_path(item, attr->as_string());
      out.push_back(v.is_undefined() && fallback ? *fallback : v);
    }
    return Value::list(std::move(out));
  }
  if (args.positional.empty() || !args.positional[0].is(ValueKind::kString))
    raise("map needs a filter name or attribute=");
  Node filter(NodeKind::kName, 0);
  filter.text = args.positional[0].as_string();
  for (const Value& item : operand.as_list().items)
    out.push_back(apply_filter(interp, item, filter, scope));
  return Value::list(std::move(out));
}

Value list_call_filter(const std::string& name, Interpreter& interp, const Value& operand,
                       const Node& call, const CallArgs& args, const ScopePtr& scope) {
  if (name == "sort") {
    bool reverse = bool_arg(args, 0, "reverse", false, "reverse must be a boolean");
    bool case_sensitive =
        bool_arg(args, 1, "case_sensitive", false, "case_sensitive must be a boolean");
    const Value* attr = args.get(2, "attribute");
    std::optional<std::string> path;
    if (attr && attr->is(ValueKind::kString))
      path = attr->as_string();
    else if (attr && attr->is(ValueKind::kInt))
      path = std::to_string(attr->as_int());
    else if (attr && !attr->is_none())
      raise("attribute must be a string, integer, or null");
    return sort_values(operand, reverse, case_sensitive, path);
  }
  if (name == "selectattr" || name == "rejectattr")
    return select_filter(name, interp, operand, call, args);
  if (name == "map") return map_filter(interp, operand, args, scope);
  raise("Unknown ArrayValue filter: " + name);
}

Value string_call_filter(const std::string& name, const Value& operand, const CallArgs& args) {
  if (name == "indent") {
    Value width = arg_or(args, 0, "width", Value::integer(4));
    if (!width.is(ValueKind::kInt)) raise("width must be a number");
    bool first = arg_or(args, 1, "first", Value::boolean(false)).truthy();
    bool blank = arg_or(args, 2, "blank", Value::boolean(false)).truthy();
    return indent_lines(operand.as_string(), width.as_int(), first, blank);
  }
  if (name == "replace") {
    Value fn = member_builtin(operand, "replace");
    return fn.as_function()(args, nullptr);
  }
  raise("Unknown StringValue filter: " + name);
}

}  // namespace

Value apply_filter_call(Interpreter& interp, const Value& operand, const Node& call,
                        const ScopePtr& scope) {
  const std::string& name = call.kids[0]->text;
  CallArgs args = interp.eval_args(call.args, scope);
  if (name == "tojson") return tojson_filter(operand, args);
  if (name == "join") return join_filter(operand, args);
  if (name == "int" || name == "float") return number_conversion(name, operand, args);
  if (name == "default" || name == "d") return default_filter(operand, args);
  if (operand.is_list()) return list_call_filter(name, interp, operand, call, args, scope);
  if (operand.is(ValueKind::kString)) return string_call_filter(name, operand, args);
  if (operand.is_number() && name == "round") {
    Value precision = arg_or(args, 0, "precision", Value::integer(0));
    Value method = arg_or(args, 1, "method", Value::string("common"));
    if (!precision.is(ValueKind::kInt) || !method.is(ValueKind::kString))
      raise("round: bad arguments");
    return round_number(operand, precision.as_int(), method.as_string());
  }
  if (operand.is_dict()) {
    Value builtin = member_builtin(operand, name);
    if (builtin.is(ValueKind::kFunction)) return builtin.as_function()(args, scope);
    raise("Unknown ObjectValue filter: " + name);
  }
  raise("Cannot apply filter \"" + name + "\" to type: " + value_kind_name(operand.kind()));
}

Value attribute_path(const Value& item, const std::string& path) {
  Value v = item;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (v.is_attribute_container()) {
      const Value* found = v.as_dict().find(part);
      v = found ? *found : Value();
    } else if (v.is_list()) {
      double index = 0;
      const auto& items = v.as_list().items;
      if (!parse_int_prefix(part, index) || index < 0 || index >= static_cast<double>(items.size()))
        return Value();
      v = items[static_cast<size_t>(index)];
    } else {
      return Value();
    }
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

Value sort_values(const Value& list, bool reverse, bool case_sensitive,
                  const std::optional<std::string>& attribute) {
  std::vector<Value> items = list.as_list().items;
  auto key = [&](const Value& v) { return attribute ? attribute_path(v, *attribute) : v; };
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    int c = compare_values(key(a), key(b), case_sensitive);
    return reverse ? c > 0 : c < 0;
  });
  return Value::list(std::move(items));
}

}  // namespace cairn::jinja
