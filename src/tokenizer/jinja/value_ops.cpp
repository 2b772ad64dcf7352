#include "tokenizer/jinja/value_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tokenizer/jinja/text.h"

namespace cairn::jinja {

namespace {

std::string ascii_safe(std::string_view s) {
  std::string out;
  size_t pos = 0;
  while (pos < s.size()) {
    if (static_cast<unsigned char>(s[pos]) < 0x7F) {
      out += s[pos++];
      continue;
    }
    char32_t cp = decode_utf8(s, pos);
    char buf[16];
    if (cp > 0xFFFF) {
      char32_t v = cp - 0x10000;
      std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                    static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
    } else {
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(cp));
    }
    out += buf;
  }
  return out;
}

std::string quote_key(std::string_view key, const JsonOptions& options) {
  std::string q = json_quote(key);
  return options.ensure_ascii ? ascii_safe(q) : q;
}

std::string container_json(const Value& value, const JsonOptions& options, bool undefined_as_null,
                           int depth) {
  std::string item_sep = ", ";
  std::string key_sep = ": ";
  bool indented = options.indent && *options.indent != 0;
  if (options.separators) {
    item_sep = options.separators->first;
    key_sep = options.separators->second;
  } else if (indented) {
    item_sep = ",";
  }
  std::string unit =
      indented ? std::string(static_cast<size_t>(std::max<int64_t>(*options.indent, 0)), ' ') : "";
  std::string base = "\n";
  for (int i = 0; i < depth; ++i) base += unit;
  std::string child = base + unit;
  std::vector<std::string> parts;
  if (value.is_list()) {
    for (const Value& item : value.as_list().items)
      parts.push_back(to_json_text(item, options, undefined_as_null, depth + 1));
  } else {
    auto entries = value.as_dict().entries;
    if (options.sort_keys)
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, item] : entries) {
      std::string text = quote_key(key, options) + key_sep +
                         to_json_text(item, options, undefined_as_null, depth + 1);
      parts.push_back(indented ? child + text : text);
    }
  }
  std::string open = value.is_list() ? "[" : "{";
  std::string close = value.is_list() ? "]" : "}";
  std::string joined;
  std::string sep = (indented && value.is_list()) ? item_sep + child : item_sep;
  for (size_t i = 0; i < parts.size(); ++i) joined += (i ? sep : "") + parts[i];
  if (!indented || parts.empty()) return open + joined + close;
  if (value.is_list()) return open + child + joined + base + close;
  return open + joined + base + close;
}

}  // namespace

std::string to_json_text(const Value& value, const JsonOptions& options, bool undefined_as_null,
                         int depth) {
  if (depth > 256) raise("tojson: nesting too deep");
  switch (value.kind()) {
    case ValueKind::kNone:
      return "null";
    case ValueKind::kUndefined:
      return undefined_as_null ? "null" : "undefined";
    case ValueKind::kInt:
      return std::to_string(value.as_int());
    case ValueKind::kFloat:
      return std::isfinite(value.as_float()) ? js_number_text(value.as_float()) : "null";
    case ValueKind::kBool:
      return value.as_bool() ? "true" : "false";
    case ValueKind::kString: {
      std::string q = json_quote(value.as_string());
      return options.ensure_ascii ? ascii_safe(q) : q;
    }
    case ValueKind::kList:
      // Tuples have no JSON form in the reference renderer (printing one fails too).
      if (value.is_tuple()) break;
      return container_json(value, options, undefined_as_null, depth);
    case ValueKind::kDict:
    case ValueKind::kNamespace:
      return container_json(value, options, undefined_as_null, depth);
    case ValueKind::kFunction:
      break;
  }
  raise(std::string("Cannot convert to JSON: ") +
        (value.is_tuple() ? "TupleValue" : value_kind_name(value.kind())));
}

std::string to_output_string(const Value& value) {
  switch (value.kind()) {
    case ValueKind::kUndefined:
      return "undefined";
    case ValueKind::kNone:
      return "null";
    case ValueKind::kBool:
      return value.as_bool() ? "true" : "false";
    case ValueKind::kInt:
      return std::to_string(value.as_int());
    case ValueKind::kFloat:
      return float_text(value.as_float());
    case ValueKind::kString:
      return value.as_string();
    case ValueKind::kList:
    case ValueKind::kDict:
    case ValueKind::kNamespace:
      return to_json_text(value, {}, false);
    case ValueKind::kFunction:
      return "<function " + value.function_name() + ">";
  }
  return "";
}

std::string to_join_string(const Value& value) {
  switch (value.kind()) {
    case ValueKind::kUndefined:
    case ValueKind::kNone:
      return "";
    case ValueKind::kFloat:
      return js_number_text(value.as_float());
    case ValueKind::kList: {
      std::string out;
      const auto& items = value.as_list().items;
      for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + to_output_string(items[i]);
      return out;
    }
    case ValueKind::kDict:
      return "[object Map]";
    default:
      return to_output_string(value);
  }
}

namespace {

// JavaScript ToNumber of a string: trimmed, "" is 0, anything unparsable NaN.
double js_to_number(const std::string& s) {
  std::string t = trim(s);
  if (t.empty()) return 0;
  double d = 0;
  char* end = nullptr;
  if (t.find_first_of("xXnN") != std::string::npos && t != "Infinity" && t != "-Infinity" &&
      t != "+Infinity")
    return NAN;
  d = std::strtod(t.c_str(), &end);
  return (end && *end == '\0') ? d : NAN;
}

bool is_numeric_like(const Value& v) {
  return v.is_number() || v.is(ValueKind::kBool);
}

}  // namespace

bool loose_equals(const Value& a, const Value& b) {
  bool a_nullish = a.is_undefined() || a.is_none();
  bool b_nullish = b.is_undefined() || b.is_none();
  if (a_nullish || b_nullish) return a_nullish && b_nullish;
  if (a.is(ValueKind::kString) && b.is(ValueKind::kString)) return a.as_string() == b.as_string();
  if (is_numeric_like(a) && is_numeric_like(b)) return a.as_number() == b.as_number();
  if (is_numeric_like(a) && b.is(ValueKind::kString))
    return a.as_number() == js_to_number(b.as_string());
  if (a.is(ValueKind::kString) && is_numeric_like(b))
    return js_to_number(a.as_string()) == b.as_number();
  return a.same_object(b);
}

bool strict_equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return a.as_number() == b.as_number();
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::kUndefined:
    case ValueKind::kNone:
      return true;
    case ValueKind::kBool:
      return a.as_bool() == b.as_bool();
    case ValueKind::kString:
      return a.as_string() == b.as_string();
    default:
      return a.same_object(b);
  }
}

int compare_values(const Value& a, const Value& b, bool case_sensitive) {
  auto type_error = [&](const char* what) {
    raise(std::string(what) + value_kind_name(a.kind()) + " with " + value_kind_name(b.kind()));
  };
  if (a.is_none() && b.is_none()) return 0;
  if (a.is_none() || b.is_none()) type_error("Cannot compare ");
  if (a.is_undefined() && b.is_undefined()) return 0;
  if (a.is_undefined() || b.is_undefined()) type_error("Cannot compare ");
  if (is_numeric_like(a) && is_numeric_like(b)) {
    double x = a.as_number(), y = b.as_number();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.kind() != b.kind()) type_error("Cannot compare different types: ");
  if (!a.is(ValueKind::kString))
    raise(std::string("Cannot compare type: ") + value_kind_name(a.kind()));
  std::string x = case_sensitive ? a.as_string() : to_lower(a.as_string());
  std::string y = case_sensitive ? b.as_string() : to_lower(b.as_string());
  return x < y ? -1 : (x > y ? 1 : 0);
}

namespace {

// JavaScript objects list integer-like keys first, in ascending order.
bool is_array_index(const std::string& key, uint32_t& index) {
  if (key.empty() || key.size() > 10 || (key.size() > 1 && key[0] == '0')) return false;
  uint64_t v = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v >= 0xFFFFFFFFull) return false;
  index = static_cast<uint32_t>(v);
  return true;
}

Value dict_from_json(const nlohmann::ordered_json& json) {
  DictData data;
  std::vector<std::pair<uint32_t, std::string>> indexed;
  for (const auto& [key, item] : json.items()) {
    uint32_t index = 0;
    if (is_array_index(key, index)) indexed.emplace_back(index, key);
  }
  std::sort(indexed.begin(), indexed.end());
  for (const auto& [index, key] : indexed) data.entries.emplace_back(key, from_json(json[key]));
  for (const auto& [key, item] : json.items()) {
    uint32_t index = 0;
    if (!is_array_index(key, index)) data.entries.emplace_back(key, from_json(item));
  }
  return Value::dict(std::move(data));
}

}  // namespace

Value from_json(const nlohmann::ordered_json& json) {
  using T = nlohmann::ordered_json::value_t;
  switch (json.type()) {
    case T::null:
      return Value::none();
    case T::boolean:
      return Value::boolean(json.get<bool>());
    case T::number_integer:
      return Value::integer(json.get<int64_t>());
    case T::number_unsigned: {
      uint64_t u = json.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value::integer(static_cast<int64_t>(u));
      return Value::floating(static_cast<double>(u));
    }
    case T::number_float: {
      double d = json.get<double>();
      if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.2e18)
        return Value::integer(static_cast<int64_t>(d));
      return Value::floating(d);
    }
    case T::string:
      return Value::string(json.get<std::string>());
    case T::array: {
      std::vector<Value> items;
      for (const auto& item : json) items.push_back(from_json(item));
      return Value::list(std::move(items));
    }
    case T::object:
      return dict_from_json(json);
    default:
      return Value();
  }
}

nlohmann::ordered_json to_json(const Value& value) {
  switch (value.kind()) {
    case ValueKind::kBool:
      return value.as_bool();
    case ValueKind::kInt:
      return value.as_int();
    case ValueKind::kFloat:
      return value.as_float();
    case ValueKind::kString:
      return value.as_string();
    case ValueKind::kList: {
      auto out = nlohmann::ordered_json::array();
      for (const Value& item : value.as_list().items) out.push_back(to_json(item));
      return out;
    }
    case ValueKind::kDict:
    case ValueKind::kNamespace: {
      auto out = nlohmann::ordered_json::object();
      for (const auto& [key, item] : value.as_dict().entries) out[key] = to_json(item);
      return out;
    }
    default:
      return nullptr;
  }
}

}  // namespace cairn::jinja
