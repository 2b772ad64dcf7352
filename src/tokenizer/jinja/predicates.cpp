// Tests: `value is name` and `value is name(arg)`.
#include <cmath>
#include <functional>
#include <unordered_map>

#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/text.h"
#include "tokenizer/jinja/value_ops.h"

namespace cairn::jinja {

namespace {

using TestFn = std::function<bool(const Value&, const Value&)>;

bool is_integer_value(const Value& v) {
  return v.is(ValueKind::kInt);
}

int compare_for_test(const Value& a, const Value& b) {
  if (a.is(ValueKind::kString) && b.is(ValueKind::kString))
    return a.as_string().compare(b.as_string());
  if ((a.is_number() || a.is(ValueKind::kBool)) && (b.is_number() || b.is(ValueKind::kBool))) {
    double x = a.as_number(), y = b.as_number();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  raise(std::string("Cannot compare ") + value_kind_name(a.kind()) + " with " +
        value_kind_name(b.kind()));
}

bool divisible_by(const Value& a, const Value& b) {
  if (!a.is_number() || !b.is_number()) raise("divisibleby needs numbers");
  if (b.as_number() == 0) raise("divisibleby: division by zero");
  if (a.is(ValueKind::kInt) && b.is(ValueKind::kInt)) return a.as_int() % b.as_int() == 0;
  return std::fmod(a.as_number(), b.as_number()) == 0;
}

bool member_of(const Value& a, const Value& b) {
  if (b.is_list()) {
    for (const Value& v : b.as_list().items)
      if (strict_equals(v, a)) return true;
    return false;
  }
  if (b.is(ValueKind::kString) && a.is(ValueKind::kString))
    return b.as_string().find(a.as_string()) != std::string::npos;
  if (b.is_dict() && a.is(ValueKind::kString)) return b.as_dict().find(a.as_string()) != nullptr;
  raise(std::string("'in' test: cannot look in ") + value_kind_name(b.kind()));
}

// Equality as the reference renderer's equalto test: same primitive value.
bool raw_equal(const Value& a, const Value& b) {
  return strict_equals(a, b);
}

// Tests of the value alone.
const std::unordered_map<std::string, TestFn>& value_tests() {
  static const std::unordered_map<std::string, TestFn> kTests = {
      {"boolean", [](const Value& v, const Value&) { return v.is(ValueKind::kBool); }},
      {"callable", [](const Value& v, const Value&) { return v.is(ValueKind::kFunction); }},
      {"odd",
       [](const Value& v, const Value&) {
         if (!is_integer_value(v)) raise(std::string("cannot odd on ") + value_kind_name(v.kind()));
         return v.as_int() % 2 != 0;
       }},
      {"even",
       [](const Value& v, const Value&) {
         if (!is_integer_value(v))
           raise(std::string("cannot even on ") + value_kind_name(v.kind()));
         return v.as_int() % 2 == 0;
       }},
      {"false",
       [](const Value& v, const Value&) { return v.is(ValueKind::kBool) && !v.as_bool(); }},
      {"true", [](const Value& v, const Value&) { return v.is(ValueKind::kBool) && v.as_bool(); }},
      {"none", [](const Value& v, const Value&) { return v.is_none(); }},
      {"string", [](const Value& v, const Value&) { return v.is(ValueKind::kString); }},
      {"number", [](const Value& v, const Value&) { return v.is_number(); }},
      {"integer", [](const Value& v, const Value&) { return v.is(ValueKind::kInt); }},
      {"float", [](const Value& v, const Value&) { return v.is(ValueKind::kFloat); }},
      // The reference renderer counts lists (not tuples) and strings as iterable.
      {"iterable",
       [](const Value& v, const Value&) {
         return (v.is_list() && !v.is_tuple()) || v.is(ValueKind::kString);
       }},
      {"mapping", [](const Value& v, const Value&) { return v.is_dict(); }},
      {"sequence",
       [](const Value& v, const Value&) {
         return v.is_list() || v.is_dict() || v.is(ValueKind::kString);
       }},
      {"lower",
       [](const Value& v, const Value&) {
         return v.is(ValueKind::kString) && v.as_string() == to_lower(v.as_string());
       }},
      {"upper",
       [](const Value& v, const Value&) {
         return v.is(ValueKind::kString) && v.as_string() == to_upper(v.as_string());
       }},
      {"defined", [](const Value& v, const Value&) { return !v.is_undefined(); }},
      {"undefined", [](const Value& v, const Value&) { return v.is_undefined(); }},
  };
  return kTests;
}

// Tests comparing the value with an argument.
const std::unordered_map<std::string, TestFn>& comparison_tests() {
  static const std::unordered_map<std::string, TestFn> kTests = {
      {"equalto", raw_equal},
      {"eq", raw_equal},
      {"==", raw_equal},
      {"ne", [](const Value& a, const Value& b) { return !raw_equal(a, b); }},
      {"!=", [](const Value& a, const Value& b) { return !raw_equal(a, b); }},
      {"lt", [](const Value& a, const Value& b) { return compare_for_test(a, b) < 0; }},
      {"<", [](const Value& a, const Value& b) { return compare_for_test(a, b) < 0; }},
      {"le", [](const Value& a, const Value& b) { return compare_for_test(a, b) <= 0; }},
      {"<=", [](const Value& a, const Value& b) { return compare_for_test(a, b) <= 0; }},
      {"gt", [](const Value& a, const Value& b) { return compare_for_test(a, b) > 0; }},
      {">", [](const Value& a, const Value& b) { return compare_for_test(a, b) > 0; }},
      {"ge", [](const Value& a, const Value& b) { return compare_for_test(a, b) >= 0; }},
      {">=", [](const Value& a, const Value& b) { return compare_for_test(a, b) >= 0; }},
      {"divisibleby", divisible_by},
      {"in", member_of},
      {"sameas",
       [](const Value& a, const Value& b) {
         return a.identity() ? a.same_object(b) : strict_equals(a, b) && a.kind() == b.kind();
       }},
  };
  return kTests;
}

}  // namespace

bool apply_test(const std::string& name, const Value& value, const std::vector<Value>& args) {
  Value arg = args.empty() ? Value() : args[0];
  for (const auto* table : {&value_tests(), &comparison_tests()}) {
    auto it = table->find(name);
    if (it != table->end()) return it->second(value, arg);
  }
  raise("Unknown test: " + name);
}

}  // namespace cairn::jinja
