// Global names every template sees: true/false/none in both spellings,
// range(), namespace(), dict(), raise_exception() and strftime_now().
#include <cstdio>
#include <ctime>

#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/value_ops.h"

namespace cairn::jinja {

namespace {

int64_t int_arg(const Value& v) {
  if (v.is(ValueKind::kInt)) return v.as_int();
  if (v.is(ValueKind::kBool)) return v.as_bool() ? 1 : 0;
  raise(std::string("range() arguments must be integers, got ") + value_kind_name(v.kind()));
}

Value range_fn(const CallArgs& args, const ScopePtr&) {
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3) raise("range() takes 1 to 3 arguments");
  int64_t start = p.size() == 1 ? 0 : int_arg(p[0]);
  int64_t stop = p.size() == 1 ? int_arg(p[0]) : int_arg(p[1]);
  int64_t step = p.size() == 3 ? int_arg(p[2]) : 1;
  if (step == 0) raise("range() step must not be zero");
  std::vector<Value> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (out.size() >= kMaxListItems) raise("range() too large");
    out.push_back(Value::integer(i));
    if ((step > 0 && i > INT64_MAX - step) || (step < 0 && i < INT64_MIN - step)) break;
  }
  return Value::list(std::move(out));
}

void add_pairs(DictData& entries, const Value& source) {
  if (source.is_dict()) {
    for (const auto& [k, v] : source.as_dict().entries) entries.set(k, v);
    return;
  }
  if (!source.is_list())
    raise(std::string("'") + value_kind_name(source.kind()) + "' object is not iterable");
  for (const Value& pair : source.as_list().items) {
    if (!pair.is_list() || pair.as_list().items.size() != 2)
      raise("namespace expected an object or an iterable of [key, value] pairs");
    const Value& key = pair.as_list().items[0];
    if (!key.is(ValueKind::kString)) raise("namespace keys must be strings");
    entries.set(key.as_string(), pair.as_list().items[1]);
  }
}

DictData gather_entries(const CallArgs& args, const char* name) {
  if (args.positional.size() > 1)
    raise(std::string(name) + " expected at most 1 argument, got " +
          std::to_string(args.positional.size()));
  DictData entries;
  if (args.positional.size() == 1) add_pairs(entries, args.positional[0]);
  for (const auto& [k, v] : args.keywords) entries.set(k, v);
  return entries;
}

const char* kMonthsLong[12] = {"January",   "February", "March",    "April",
                               "May",       "June",     "July",     "August",
                               "September", "October",  "November", "December"};
const char* kMonthsShort[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// %Y %m %d %b %B %H %M %% are replaced; any other directive is kept as written.
std::string format_time(const std::string& format, const std::tm& tm) {
  std::string out;
  auto pad2 = [](int n) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "%02d", n);
    return std::string(buf);
  };
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 >= format.size()) {
      out += format[i];
      continue;
    }
    char d = format[i + 1];
    switch (d) {
      case 'Y':
        out += std::to_string(tm.tm_year + 1900);
        break;
      case 'm':
        out += pad2(tm.tm_mon + 1);
        break;
      case 'd':
        out += pad2(tm.tm_mday);
        break;
      case 'b':
        out += kMonthsShort[tm.tm_mon];
        break;
      case 'B':
        out += kMonthsLong[tm.tm_mon];
        break;
      case 'H':
        out += pad2(tm.tm_hour);
        break;
      case 'M':
        out += pad2(tm.tm_min);
        break;
      case '%':
        out += '%';
        break;
      default:
        out += format[i];
        continue;
    }
    ++i;
  }
  return out;
}

}  // namespace

void install_globals(Scope& scope, const GlobalOptions& options) {
  scope.set("true", Value::boolean(true));
  scope.set("false", Value::boolean(false));
  scope.set("none", Value::none());
  scope.set("True", Value::boolean(true));
  scope.set("False", Value::boolean(false));
  scope.set("None", Value::none());
  scope.set("range", Value::function(range_fn, "range"));
  scope.set("namespace", Value::function(
                             [](const CallArgs& args, const ScopePtr&) {
                               return Value::namespace_of(gather_entries(args, "namespace"));
                             },
                             "namespace"));
  scope.set("dict", Value::function(
                        [](const CallArgs& args, const ScopePtr&) {
                          return Value::dict(gather_entries(args, "dict"));
                        },
                        "dict"));
  scope.set("raise_exception", Value::function(
                                   [](const CallArgs& args, const ScopePtr&) -> Value {
                                     raise(args.positional.empty()
                                               ? std::string("undefined")
                                               : to_output_string(args.positional[0]));
                                   },
                                   "raise_exception"));
  std::optional<std::time_t> now = options.now;
  scope.set("strftime_now",
            Value::function(
                [now](const CallArgs& args, const ScopePtr&) {
                  if (args.positional.empty() || !args.positional[0].is(ValueKind::kString))
                    raise("strftime_now() needs a format string");
                  std::time_t t = now.value_or(std::time(nullptr));
                  std::tm tm{};
                  if (now)
                    gmtime_r(&t, &tm);
                  else
                    localtime_r(&t, &tm);
                  return Value::string(format_time(args.positional[0].as_string(), tm));
                },
                "strftime_now"));
}

}  // namespace cairn::jinja
