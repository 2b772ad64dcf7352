// Filters written without arguments: `value | name`. Filters with arguments
// (`value | name(...)`) live in filter_calls.cpp.
#include <cmath>

#include "tokenizer/jinja/filters.h"
#include "tokenizer/jinja/text.h"
#include "tokenizer/jinja/value_ops.h"

namespace cairn::jinja {

namespace {

int64_t utf16_length(std::string_view s) {
  int64_t n = 0;
  size_t pos = 0;
  while (pos < s.size()) n += decode_utf8(s, pos) > 0xFFFF ? 2 : 1;
  return n;
}

[[noreturn]] void unknown(const char* kind, const std::string& name) {
  raise(std::string("Unknown ") + kind + " filter: " + name);
}

std::string title_case(const std::string& s) {
  std::string out = s;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < out.size(); ++i) {
    bool starts = word(out[i]) && (i == 0 || !word(out[i - 1]));
    if (starts && static_cast<unsigned char>(out[i]) < 0x80)
      out[i] = static_cast<char>(std::toupper(out[i]));
  }
  return out;
}

std::string capitalize(const std::string& s) {
  if (s.empty()) return s;
  size_t pos = 0;
  decode_utf8(s, pos);
  return to_upper(s.substr(0, pos)) + s.substr(pos);
}

Value list_filter(const std::string& name, const Value& operand) {
  const auto& items = operand.as_list().items;
  if (name == "list") return operand;
  if (name == "first") return items.empty() ? Value() : items.front();
  if (name == "last") return items.empty() ? Value() : items.back();
  if (name == "length" || name == "count")
    return Value::integer(static_cast<int64_t>(items.size()));
  if (name == "reverse") return Value::list(std::vector<Value>(items.rbegin(), items.rend()));
  if (name == "sort") return sort_values(operand, false, false, std::nullopt);
  if (name == "join") {
    std::string out;
    for (const Value& v : items) out += to_join_string(v);
    return Value::string(std::move(out));
  }
  if (name == "string") return Value::string(to_output_string(operand));
  if (name == "unique") {
    std::vector<Value> out;
    for (const Value& v : items) {
      bool seen = false;
      for (const Value& u : out) seen = seen || strict_equals(u, v);
      if (!seen) out.push_back(v);
    }
    return Value::list(std::move(out));
  }
  unknown("ArrayValue", name);
}

Value string_filter(const std::string& name, const Value& operand) {
  const std::string& s = operand.as_string();
  if (name == "length" || name == "count") return Value::integer(utf16_length(s));
  if (name == "upper") return Value::string(to_upper(s));
  if (name == "lower") return Value::string(to_lower(s));
  if (name == "title") return Value::string(title_case(s));
  if (name == "capitalize") return Value::string(capitalize(s));
  if (name == "trim") return Value::string(trim(s));
  if (name == "indent") return indent_lines(s, 4, false, false);
  if (name == "join" || name == "string") return operand;
  if (name == "int" || name == "float") {
    double d = 0;
    bool ok = name == "int" ? parse_int_prefix(s, d) : parse_float_prefix(s, d);
    if (name == "float") return Value::floating(ok ? d : 0);
    if (ok && std::fabs(d) > 9.2e18) raise("int filter: value out of range");
    return Value::integer(ok ? static_cast<int64_t>(d) : 0);
  }
  if (name == "list") {
    std::vector<Value> chars;
    for (auto& c : split_code_points(s)) chars.push_back(Value::string(std::move(c)));
    return Value::list(std::move(chars));
  }
  if (name == "wordcount") {
    int64_t n = 0;
    bool in_word = false;
    for (char c : s) {
      bool w = std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
               static_cast<unsigned char>(c) >= 0x80;
      n += (w && !in_word);
      in_word = w;
    }
    return Value::integer(n);
  }
  if (name == "escape" || name == "e") return Value::string(html_escape(s));
  unknown("StringValue", name);
}

Value number_filter(const std::string& name, const Value& operand) {
  bool is_int = operand.is(ValueKind::kInt);
  if (name == "abs") {
    if (is_int && operand.as_int() == INT64_MIN) raise("integer overflow");
    return is_int ? Value::integer(std::llabs(operand.as_int()))
                  : Value::floating(std::fabs(operand.as_float()));
  }
  if (name == "int") {
    if (is_int) return operand;
    double f = std::floor(operand.as_float());
    if (!std::isfinite(f) || std::fabs(f) > 9.2e18) raise("int filter: value out of range");
    return Value::integer(static_cast<int64_t>(f));
  }
  if (name == "float") return Value::floating(operand.as_number());
  if (name == "string") return Value::string(to_output_string(operand));
  if (name == "round") return round_number(operand, 0, "common");
  unknown("NumericValue", name);
}

Value dict_filter(const std::string& name, const Value& operand) {
  if (name == "items") return member_builtin(operand, "items").as_function()(CallArgs{}, nullptr);
  if (name == "length" || name == "count")
    return Value::integer(static_cast<int64_t>(operand.as_dict().entries.size()));
  Value builtin = member_builtin(operand, name);
  if (builtin.is(ValueKind::kFunction)) return builtin.as_function()(CallArgs{}, nullptr);
  unknown("ObjectValue", name);
}

Value bool_filter(const std::string& name, const Value& operand) {
  bool b = operand.as_bool();
  if (name == "bool") return operand;
  if (name == "int") return Value::integer(b ? 1 : 0);
  if (name == "float") return Value::floating(b ? 1 : 0);
  if (name == "string") return Value::string(b ? "true" : "false");
  unknown("BooleanValue", name);
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Value indent_lines(const std::string& s, int64_t width, bool first, bool blank) {
  if (width < 0 || width > 1024) raise("indent width out of range");
  std::string pad(static_cast<size_t>(width), ' ');
  std::string out;
  size_t start = 0;
  for (size_t line = 0;; ++line) {
    size_t end = s.find('\n', start);
    std::string_view text(s.data() + start, (end == std::string::npos ? s.size() : end) - start);
    bool skip = (line == 0 && !first) || (text.empty() && !blank);
    if (!skip) out += pad;
    out += text;
    if (end == std::string::npos) break;
    out += '\n';
    start = end + 1;
  }
  return Value::string(std::move(out));
}

Value round_number(const Value& v, int64_t precision, const std::string& method) {
  if (precision < 0 || precision > 15) raise("round: precision out of range");
  double scale = std::pow(10.0, static_cast<double>(precision));
  double x = v.as_number() * scale;
  double r = method == "floor" ? std::floor(x) : method == "ceil" ? std::ceil(x) : std::round(x);
  return Value::floating(r / scale);
}

Value apply_named_filter(const std::string& name, const Value& operand) {
  if (name == "safe") return operand;
  if (name == "tojson") return Value::string(to_json_text(operand));
  if (operand.is_list()) return list_filter(name, operand);
  if (operand.is(ValueKind::kString)) return string_filter(name, operand);
  if (operand.is_number()) return number_filter(name, operand);
  if (operand.is_dict()) return dict_filter(name, operand);
  if (operand.is(ValueKind::kBool)) return bool_filter(name, operand);
  raise("Cannot apply filter \"" + name + "\" to type: " + value_kind_name(operand.kind()));
}

Value apply_filter(Interpreter& interp, const Value& operand, const Node& filter,
                   const ScopePtr& scope) {
  if (filter.kind == NodeKind::kName) {
    // A bare `default`/`d` means default(""): undefined becomes the empty string.
    if (filter.text == "default" || filter.text == "d")
      return operand.is_undefined() ? Value::string("") : operand;
    return apply_named_filter(filter.text, operand);
  }
  if (filter.kind != NodeKind::kCall || filter.kids[0]->kind != NodeKind::kName)
    raise("Unknown filter");
  return apply_filter_call(interp, operand, filter, scope);
}

}  // namespace cairn::jinja
