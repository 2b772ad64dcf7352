// Methods reached by attribute access: string methods (s.strip(), s.split(),
// ...), dict methods (d.items(), d.get(), ...) and list methods (l.append()).
#include <algorithm>
#include <functional>

#include "tokenizer/jinja/filters.h"
#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/mutation_log.h"
#include "tokenizer/jinja/text.h"
#include "tokenizer/jinja/value_ops.h"

namespace cairn::jinja {

namespace {

using Method = std::function<Value(const CallArgs&)>;

Value bound_method(Method m, const std::string& name) {
  return Value::function(
      [m = std::move(m)](const CallArgs& args, const ScopePtr&) { return m(args); }, name);
}

const std::string& string_arg(const CallArgs& args, size_t n, const char* method) {
  if (n >= args.positional.size() || !args.positional[n].is(ValueKind::kString))
    raise(std::string(method) + "() arguments must be strings");
  return args.positional[n].as_string();
}

// Python str.strip(chars): with no chars (or None), JavaScript whitespace.
std::string strip_chars(const std::string& s, const CallArgs& args, bool left, bool right) {
  if (args.positional.empty() || args.positional[0].is_none()) {
    if (left && right) return trim(s);
    return left ? trim_start(s) : trim_end(s);
  }
  auto set = split_code_points(string_arg(args, 0, "strip"));
  auto chars = split_code_points(s);
  auto in_set = [&](const std::string& c) {
    return std::find(set.begin(), set.end(), c) != set.end();
  };
  size_t lo = 0, hi = chars.size();
  while (left && lo < hi && in_set(chars[lo])) ++lo;
  while (right && hi > lo && in_set(chars[hi - 1])) --hi;
  std::string out;
  for (size_t i = lo; i < hi; ++i) out += chars[i];
  return out;
}

Value split_method(const std::string& s, const CallArgs& args) {
  Value sep = args.positional.size() > 0
                  ? args.positional[0]
                  : (args.keyword("sep") ? *args.keyword("sep") : Value::none());
  if (!sep.is(ValueKind::kString) && !sep.is_none()) raise("sep argument must be a string or null");
  const Value* max_arg = args.get(1, "maxsplit");
  if (max_arg && !max_arg->is(ValueKind::kInt)) raise("maxsplit argument must be a number");
  int64_t maxsplit = max_arg ? max_arg->as_int() : -1;
  std::vector<Value> parts;
  if (sep.is_none()) {
    std::string text = trim_start(s);
    size_t pos = 0;
    while (pos < text.size()) {
      size_t start = pos;
      while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
      if (maxsplit != -1 && static_cast<int64_t>(parts.size()) >= maxsplit) {
        parts.push_back(Value::string(text.substr(start)));
        break;
      }
      parts.push_back(Value::string(text.substr(start, pos - start)));
      while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    }
    return Value::list(std::move(parts));
  }
  const std::string& d = sep.as_string();
  if (d.empty()) raise("empty separator");
  size_t start = 0;
  while (true) {
    size_t found = s.find(d, start);
    bool limit = maxsplit != -1 && static_cast<int64_t>(parts.size()) >= maxsplit;
    if (found == std::string::npos || limit) {
      parts.push_back(Value::string(s.substr(start)));
      return Value::list(std::move(parts));
    }
    parts.push_back(Value::string(s.substr(start, found - start)));
    start = found + d.size();
  }
}

Value replace_method(const std::string& s, const CallArgs& args) {
  if (args.positional.size() < 2) raise("replace() requires at least two arguments");
  const std::string& old_text = string_arg(args, 0, "replace");
  const std::string& new_text = string_arg(args, 1, "replace");
  const Value* count_arg = args.get(2, "count");
  if (count_arg && !count_arg->is(ValueKind::kInt) && !count_arg->is_none())
    raise("replace() count argument must be a number or null");
  int64_t remaining = (count_arg && count_arg->is(ValueKind::kInt) && count_arg->as_int() >= 0)
                          ? count_arg->as_int()
                          : INT64_MAX;
  std::string out;
  if (old_text.empty()) {  // inserts at every character boundary
    auto chars = split_code_points(s);
    for (size_t i = 0; i <= chars.size(); ++i) {
      if (remaining > 0) {
        out += new_text;
        --remaining;
      }
      if (i < chars.size()) out += chars[i];
      if (out.size() > kMaxStringBytes) raise("string too large");
    }
    return Value::string(std::move(out));
  }
  size_t start = 0;
  for (size_t found; remaining > 0 && (found = s.find(old_text, start)) != std::string::npos;
       --remaining) {
    out.append(s, start, found - start);
    out += new_text;
    start = found + old_text.size();
    if (out.size() > kMaxStringBytes) raise("string too large");
  }
  out.append(s, start);
  return Value::string(std::move(out));
}

bool affix_method(const std::string& s, const CallArgs& args, bool prefix) {
  const char* name = prefix ? "startswith" : "endswith";
  if (args.positional.empty()) raise(std::string(name) + "() requires at least one argument");
  auto matches = [&](const std::string& a) {
    return a.size() <= s.size() && (prefix ? s.compare(0, a.size(), a) == 0
                                           : s.compare(s.size() - a.size(), a.size(), a) == 0);
  };
  const Value& pattern = args.positional[0];
  if (pattern.is(ValueKind::kString)) return matches(pattern.as_string());
  if (!pattern.is_list())
    raise(std::string(name) + "() argument must be a string or tuple of strings");
  for (const Value& item : pattern.as_list().items) {
    if (!item.is(ValueKind::kString))
      raise(std::string(name) + "() tuple elements must be strings");
    if (matches(item.as_string())) return true;
  }
  return false;
}

// Python str.format with {}, {0} and {name} fields; format specs are ignored.
std::string format_method(const std::string& s, const CallArgs& args) {
  std::string out;
  size_t next_auto = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((s[i] == '{' || s[i] == '}') && i + 1 < s.size() && s[i + 1] == s[i]) {
      out += s[i++];
      continue;
    }
    if (s[i] != '{') {
      out += s[i];
      continue;
    }
    size_t close = s.find('}', i);
    if (close == std::string::npos) raise("format(): unmatched '{'");
    std::string field = s.substr(i + 1, close - i - 1);
    field = field.substr(0, field.find_first_of(":!"));
    const Value* v = nullptr;
    if (field.empty())
      v = next_auto < args.positional.size() ? &args.positional[next_auto++] : nullptr;
    else if (std::isdigit(static_cast<unsigned char>(field[0]))) {
      size_t n = std::stoul(field.substr(0, 6));
      v = n < args.positional.size() ? &args.positional[n] : nullptr;
    } else {
      v = args.keyword(field);
    }
    if (!v) raise("format(): missing argument for field '" + field + "'");
    out += to_output_string(*v);
    i = close;
  }
  return out;
}

// s.find(x): code-point index or -1; s.count(x): non-overlapping occurrences.
Value find_or_count(const std::string& s, const CallArgs& a, bool find) {
  const std::string& needle = string_arg(a, 0, find ? "find" : "count");
  size_t pos = s.find(needle);
  if (find) {
    if (pos == std::string::npos) return Value::integer(-1);
    return Value::integer(static_cast<int64_t>(count_code_points(s.substr(0, pos))));
  }
  if (needle.empty()) return Value::integer(static_cast<int64_t>(count_code_points(s)) + 1);
  int64_t n = 0;
  for (size_t start = 0; (pos = s.find(needle, start)) != std::string::npos;
       start = pos + needle.size())
    ++n;
  return Value::integer(n);
}

Value join_method(const std::string& s, const CallArgs& a) {
  if (a.positional.empty() || !a.positional[0].is_list()) raise("join() needs a list");
  std::string out;
  const auto& items = a.positional[0].as_list().items;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += s;
    out += to_join_string(items[i]);
    if (out.size() > kMaxStringBytes) raise("string too large");
  }
  return Value::string(std::move(out));
}

Value string_method(const Value& object, const std::string& name) {
  const std::string s = object.as_string();
  if (name == "length") return Value::integer(utf16_length(s));
  if (name == "upper")
    return bound_method([s](const CallArgs&) { return Value::string(to_upper(s)); }, name);
  if (name == "lower")
    return bound_method([s](const CallArgs&) { return Value::string(to_lower(s)); }, name);
  if (name == "title" || name == "capitalize")
    return bound_method(
        [s, name](const CallArgs&) { return apply_named_filter(name, Value::string(s)); }, name);
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    bool left = name != "rstrip", right = name != "lstrip";
    return bound_method(
        [s, left, right](const CallArgs& a) {
          return Value::string(strip_chars(s, a, left, right));
        },
        name);
  }
  if (name == "startswith" || name == "endswith") {
    bool prefix = name == "startswith";
    return bound_method(
        [s, prefix](const CallArgs& a) { return Value::boolean(affix_method(s, a, prefix)); },
        name);
  }
  if (name == "split")
    return bound_method([s](const CallArgs& a) { return split_method(s, a); }, name);
  if (name == "replace")
    return bound_method([s](const CallArgs& a) { return replace_method(s, a); }, name);
  if (name == "format")
    return bound_method([s](const CallArgs& a) { return Value::string(format_method(s, a)); },
                        name);
  if (name == "find" || name == "count") {
    bool find = name == "find";
    return bound_method([s, find](const CallArgs& a) { return find_or_count(s, a, find); }, name);
  }
  if (name == "join")
    return bound_method([s](const CallArgs& a) { return join_method(s, a); }, name);
  return Value();
}

Value dictsort_method(const Value& object, const CallArgs& args) {
  const Value* cs = args.get(0, "case_sensitive");
  if (cs && !cs->is(ValueKind::kBool)) raise("case_sensitive must be a boolean");
  const Value* by = args.get(1, "by");
  if (by && !by->is(ValueKind::kString)) raise("by must be a string");
  std::string by_text = by ? by->as_string() : "key";
  if (by_text != "key" && by_text != "value") raise("by must be either 'key' or 'value'");
  const Value* rev = args.get(2, "reverse");
  if (rev && !rev->is(ValueKind::kBool)) raise("reverse must be a boolean");
  std::vector<Value> pairs;
  for (const auto& [k, v] : object.as_dict().entries)
    pairs.push_back(Value::list({Value::string(k), v}));
  size_t index = by_text == "key" ? 0 : 1;
  bool case_sensitive = cs && cs->as_bool(), reverse = rev && rev->as_bool();
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
    int c = compare_values(a.as_list().items[index], b.as_list().items[index], case_sensitive);
    return reverse ? c > 0 : c < 0;
  });
  return Value::list(std::move(pairs));
}

Value dict_method(const Value& object, const std::string& name) {
  if (name == "get")
    return bound_method(
        [object](const CallArgs& a) {
          if (a.positional.empty() || !a.positional[0].is(ValueKind::kString))
            raise(std::string("Object key must be a string: got ") +
                  value_kind_name(a.positional.empty() ? ValueKind::kUndefined
                                                       : a.positional[0].kind()));
          if (const Value* v = object.as_dict().find(a.positional[0].as_string())) return *v;
          return a.positional.size() > 1 ? a.positional[1] : Value::none();
        },
        name);
  if (name == "items" || name == "keys" || name == "values")
    return bound_method(
        [object, name](const CallArgs&) {
          std::vector<Value> out;
          for (const auto& [k, v] : object.as_dict().entries) {
            if (name == "items")
              out.push_back(Value::list({Value::string(k), v}));
            else
              out.push_back(name == "keys" ? Value::string(k) : v);
          }
          return Value::list(std::move(out));
        },
        name);
  if (name == "dictsort")
    return bound_method([object](const CallArgs& a) { return dictsort_method(object, a); }, name);
  return Value();
}

Value list_method(const Value& object, const std::string& name) {
  if (name == "length") return Value::integer(static_cast<int64_t>(object.as_list().items.size()));
  if (name == "append")
    return bound_method(
        [object](const CallArgs& a) {
          if (a.positional.size() != 1) raise("append() takes exactly one argument");
          if (object.as_list().items.size() >= kMaxListItems) raise("list too large");
          object.as_list().items.push_back(a.positional[0]);
          MutationLog::note(object);
          return Value::none();
        },
        name);
  if (name == "pop")
    return bound_method(
        [object](const CallArgs& a) {
          auto& items = object.as_list().items;
          if (items.empty()) raise("pop from empty list");
          int64_t n = static_cast<int64_t>(items.size());
          int64_t i = a.positional.empty()
                          ? n - 1
                          : (a.positional[0].is(ValueKind::kInt) ? a.positional[0].as_int() : n);
          if (i < 0) i += n;
          if (i < 0 || i >= n) raise("pop index out of range");
          Value v = items[static_cast<size_t>(i)];
          items.erase(items.begin() + i);
          return v;
        },
        name);
  return Value();
}

}  // namespace

Value member_builtin(const Value& object, const std::string& name) {
  if (object.is(ValueKind::kString)) return string_method(object, name);
  if (object.is_dict()) return dict_method(object, name);
  if (object.is_list()) return list_method(object, name);
  return Value();
}

}  // namespace cairn::jinja
