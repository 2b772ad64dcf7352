// Binary operators: and/or (short-circuit), ==/!=, arithmetic with Python's
// int/float distinction, comparisons, `in`, `~` and `+` concatenation.
#include <cmath>

#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/value_ops.h"

namespace cairn::jinja {

namespace {

bool is_numeric_like(const Value& v) {
  return v.is_number() || v.is(ValueKind::kBool);
}

Value checked(bool overflow, const int64_t& result) {
  if (overflow) raise("integer overflow");
  return Value::integer(result);
}

Value integer_arithmetic(const std::string& op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (op == "+") {
    bool overflow = __builtin_add_overflow(a, b, &r);
    return checked(overflow, r);
  }
  if (op == "-") {
    bool overflow = __builtin_sub_overflow(a, b, &r);
    return checked(overflow, r);
  }
  if (op == "*") {
    bool overflow = __builtin_mul_overflow(a, b, &r);
    return checked(overflow, r);
  }
  if (op == "/") return Value::floating(static_cast<double>(a) / static_cast<double>(b));
  if (b == 0) raise("integer division or modulo by zero");
  if (a == INT64_MIN && b == -1) raise("integer overflow");
  if (op == "//") {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;  // floor, not truncation
    return Value::integer(q);
  }
  return Value::integer(a % b);  // remainder takes the dividend's sign
}

Value float_arithmetic(const std::string& op, double a, double b) {
  if (op == "+") return Value::floating(a + b);
  if (op == "-") return Value::floating(a - b);
  if (op == "*") return Value::floating(a * b);
  if (op == "/") return Value::floating(a / b);
  if (op == "//") return Value::floating(std::floor(a / b));
  return Value::floating(std::fmod(a, b));
}

Value power(const Value& left, const Value& right) {
  double a = left.as_number(), b = right.as_number();
  if (a == 0 && b < 0) raise("0.0 cannot be raised to a negative power");
  double r = std::pow(a, b);
  if (!std::isfinite(r)) raise("Exponentiation result is not a finite real number");
  bool is_float = left.is(ValueKind::kFloat) || right.is(ValueKind::kFloat) || b < 0;
  if (is_float) return Value::floating(r);
  if (std::fabs(r) >= 9.2e18) raise("integer overflow");
  // Exact integer power by repeated squaring (pow() rounds above 2^53).
  int64_t base = static_cast<int64_t>(a), result = 1;
  for (int64_t e = static_cast<int64_t>(b); e > 0; e >>= 1) {
    if ((e & 1) && __builtin_mul_overflow(result, base, &result)) raise("integer overflow");
    if (e > 1 && __builtin_mul_overflow(base, base, &base)) raise("integer overflow");
  }
  return Value::integer(result);
}

Value numeric_binary(const std::string& op, const Value& left, const Value& right) {
  if (op == "<" || op == ">" || op == "<=" || op == ">=") {
    double a = left.as_number(), b = right.as_number();
    if (left.is(ValueKind::kInt) && right.is(ValueKind::kInt)) {
      int64_t x = left.as_int(), y = right.as_int();
      return Value::boolean(op == "<" ? x < y : op == ">" ? x > y : op == "<=" ? x <= y : x >= y);
    }
    return Value::boolean(op == "<" ? a < b : op == ">" ? a > b : op == "<=" ? a <= b : a >= b);
  }
  if (left.is(ValueKind::kInt) && right.is(ValueKind::kInt))
    return integer_arithmetic(op, left.as_int(), right.as_int());
  return float_arithmetic(op, left.as_number(), right.as_number());
}

bool contains(const Value& container, const Value& item, const std::string& op) {
  if (container.is_list()) {
    for (const Value& v : container.as_list().items)
      if (strict_equals(v, item)) return true;
    return false;
  }
  if (container.is(ValueKind::kString) && item.is(ValueKind::kString))
    return container.as_string().find(item.as_string()) != std::string::npos;
  if (container.is_dict() && item.is(ValueKind::kString))
    return container.as_dict().find(item.as_string());
  raise("Unknown operator \"" + op + "\" between " + value_kind_name(item.kind()) + " and " +
        value_kind_name(container.kind()));
}

}  // namespace

Value Interpreter::eval_binary(const Node& node, const ScopePtr& scope) {
  const std::string& op = node.text;
  Value left = eval(*node.kids[0], scope);
  if (op == "and") return left.truthy() ? eval(*node.kids[1], scope) : left;
  if (op == "or") return left.truthy() ? left : eval(*node.kids[1], scope);
  Value right = eval(*node.kids[1], scope);
  if (op == "==") return Value::boolean(loose_equals(left, right));
  if (op == "!=") return Value::boolean(!loose_equals(left, right));
  bool is_in = op == "in" || op == "not in";
  if (left.is_undefined() || right.is_undefined()) {
    if (right.is_undefined() && is_in) return Value::boolean(op == "not in");
    raise("Cannot perform operation " + op + " on undefined values");
  }
  if (left.is_none() || right.is_none()) raise("Cannot perform operation on null values");
  if (op == "~") return Value::string(to_join_string(left) + to_join_string(right));
  if (op == "**" && is_numeric_like(left) && is_numeric_like(right)) return power(left, right);
  if (left.is_number() && right.is_number() && !is_in) return numeric_binary(op, left, right);
  if (is_in) return Value::boolean(contains(right, left, op) == (op == "in"));
  if (op == "+" && left.is_list() && right.is_list()) {
    std::vector<Value> items = left.as_list().items;
    for (const Value& v : right.as_list().items) items.push_back(v);
    return Value::list(std::move(items));
  }
  if (op == "+" && (left.is(ValueKind::kString) || right.is(ValueKind::kString)))
    return Value::string(to_join_string(left) + to_join_string(right));
  if (left.is(ValueKind::kString) && right.is(ValueKind::kString) &&
      (op == "<" || op == ">" || op == "<=" || op == ">=")) {
    int c = left.as_string().compare(right.as_string());
    return Value::boolean(op == "<" ? c < 0 : op == ">" ? c > 0 : op == "<=" ? c <= 0 : c >= 0);
  }
  raise("Unknown operator \"" + op + "\" between " + value_kind_name(left.kind()) + " and " +
        value_kind_name(right.kind()));
}

}  // namespace cairn::jinja
