// The values a template computes with. Lists, dicts and namespaces are shared
// by reference (a namespace or a list mutated through one name is seen through
// every other), as in Python; strings and numbers are copied.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cairn::jinja {

class Value;
class Interpreter;
struct Scope;

enum class ValueKind {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,       // also a tuple when ListData::is_tuple
  kDict,       // string keys in insertion order
  kNamespace,  // namespace(): a dict whose attributes may be assigned
  kFunction,   // a global, a macro, caller() or a bound method
};

const char* value_kind_name(ValueKind kind);

// Dict storage: insertion-ordered; lookups are linear (template dicts are small).
struct DictData {
  std::vector<std::pair<std::string, Value>> entries;
  bool is_kwargs = false;  // the keyword arguments gathered by a call

  const Value* find(std::string_view key) const;
  void set(std::string key, Value value);
  bool erase(std::string_view key);
};

struct ListData {
  std::vector<Value> items;
  bool is_tuple = false;
};

// Arguments of a call: positional values then keyword values in call order.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;

  const Value* keyword(std::string_view name) const;
  // The n-th positional argument, else the keyword `name`, else nullptr.
  const Value* get(size_t n, std::string_view name) const;
};

using ScopePtr = std::shared_ptr<Scope>;
// A callable: receives its arguments and the scope of the call site.
using NativeFunction = std::function<Value(const CallArgs&, const ScopePtr&)>;

class Value {
 public:
  Value() = default;  // undefined
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value floating(double d);
  static Value string(std::string s);
  static Value list(std::vector<Value> items = {}, bool is_tuple = false);
  static Value dict(DictData data = {});
  static Value namespace_of(DictData data);
  static Value function(NativeFunction fn, std::string name = "function");

  ValueKind kind() const { return kind_; }
  bool is(ValueKind kind) const { return kind_ == kind; }
  bool is_undefined() const { return kind_ == ValueKind::kUndefined; }
  bool is_none() const { return kind_ == ValueKind::kNone; }
  bool is_number() const { return kind_ == ValueKind::kInt || kind_ == ValueKind::kFloat; }
  bool is_list() const { return kind_ == ValueKind::kList; }
  bool is_tuple() const { return kind_ == ValueKind::kList && list_->is_tuple; }
  bool is_dict() const { return kind_ == ValueKind::kDict; }
  // Dicts and namespaces: both answer `obj.attr` from their entries.
  bool is_attribute_container() const {
    return kind_ == ValueKind::kDict || kind_ == ValueKind::kNamespace;
  }

  bool as_bool() const { return bool_; }
  int64_t as_int() const { return int_; }
  double as_float() const { return float_; }
  // Int or float as a double; a bool as 0/1.
  double as_number() const;
  const std::string& as_string() const { return *string_; }
  ListData& as_list() const { return *list_; }
  DictData& as_dict() const { return *dict_; }
  const NativeFunction& as_function() const { return *function_; }
  const std::string& function_name() const { return *string_; }

  // Python-style truthiness as the template language defines it.
  bool truthy() const;
  // Same object for lists/dicts/namespaces/functions.
  bool same_object(const Value& other) const;
  const void* identity() const;

 private:
  ValueKind kind_ = ValueKind::kUndefined;
  bool bool_ = false;
  int64_t int_ = 0;
  double float_ = 0;
  std::shared_ptr<const std::string> string_;
  std::shared_ptr<ListData> list_;
  std::shared_ptr<DictData> dict_;
  std::shared_ptr<const NativeFunction> function_;
};

// Errors raised while lexing, parsing or rendering; the template wraps them
// into a cairn::Error naming the template, line and column.
class TemplateError : public std::exception {
 public:
  explicit TemplateError(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& message() const { return message_; }
  bool has_position() const { return line_ > 0; }
  void set_position(int line, int column) {
    line_ = line;
    column_ = column;
  }
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  std::string message_;
  int line_ = 0;
  int column_ = 0;
};

[[noreturn]] void raise(std::string message);

// Strings and lists larger than these raise instead of growing (bounded memory).
constexpr size_t kMaxStringBytes = size_t{16} << 20;
constexpr size_t kMaxListItems = size_t{1} << 22;

}  // namespace cairn::jinja
