#include "tokenizer/jinja/value.h"

namespace cairn::jinja {

const char* value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kUndefined:
      return "UndefinedValue";
    case ValueKind::kNone:
      return "NullValue";
    case ValueKind::kBool:
      return "BooleanValue";
    case ValueKind::kInt:
      return "IntegerValue";
    case ValueKind::kFloat:
      return "FloatValue";
    case ValueKind::kString:
      return "StringValue";
    case ValueKind::kList:
      return "ArrayValue";
    case ValueKind::kDict:
      return "ObjectValue";
    case ValueKind::kNamespace:
      return "NamespaceValue";
    case ValueKind::kFunction:
      return "FunctionValue";
  }
  return "Value";
}

void raise(std::string message) {
  throw TemplateError(std::move(message));
}

const Value* DictData::find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

void DictData::set(std::string key, Value value) {
  for (auto& [k, v] : entries) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

bool DictData::erase(std::string_view key) {
  for (auto it = entries.begin(); it != entries.end(); ++it) {
    if (it->first == key) {
      entries.erase(it);
      return true;
    }
  }
  return false;
}

const Value* CallArgs::keyword(std::string_view name) const {
  for (const auto& [k, v] : keywords) {
    if (k == name) return &v;
  }
  return nullptr;
}

const Value* CallArgs::get(size_t n, std::string_view name) const {
  if (n < positional.size()) return &positional[n];
  return keyword(name);
}

Value Value::none() {
  Value v;
  v.kind_ = ValueKind::kNone;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = ValueKind::kBool;
  v.bool_ = b;
  return v;
}

Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = ValueKind::kInt;
  v.int_ = i;
  return v;
}

Value Value::floating(double d) {
  Value v;
  v.kind_ = ValueKind::kFloat;
  v.float_ = d;
  return v;
}

Value Value::string(std::string s) {
  Value v;
  if (s.size() > kMaxStringBytes) raise("string too large");
  v.kind_ = ValueKind::kString;
  v.string_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

Value Value::list(std::vector<Value> items, bool is_tuple) {
  Value v;
  if (items.size() > kMaxListItems) raise("list too large");
  v.kind_ = ValueKind::kList;
  v.list_ = std::make_shared<ListData>(ListData{std::move(items), is_tuple});
  return v;
}

Value Value::dict(DictData data) {
  Value v;
  v.kind_ = ValueKind::kDict;
  v.dict_ = std::make_shared<DictData>(std::move(data));
  return v;
}

Value Value::namespace_of(DictData data) {
  Value v = dict(std::move(data));
  v.kind_ = ValueKind::kNamespace;
  return v;
}

Value Value::function(NativeFunction fn, std::string name) {
  Value v;
  v.kind_ = ValueKind::kFunction;
  v.function_ = std::make_shared<const NativeFunction>(std::move(fn));
  v.string_ = std::make_shared<const std::string>(std::move(name));
  return v;
}

double Value::as_number() const {
  if (kind_ == ValueKind::kInt) return static_cast<double>(int_);
  if (kind_ == ValueKind::kBool) return bool_ ? 1 : 0;
  return float_;
}

bool Value::truthy() const {
  switch (kind_) {
    case ValueKind::kUndefined:
    case ValueKind::kNone:
      return false;
    case ValueKind::kBool:
      return bool_;
    case ValueKind::kInt:
      return int_ != 0;
    case ValueKind::kFloat:
      return float_ != 0 && float_ == float_;
    case ValueKind::kString:
      return !string_->empty();
    case ValueKind::kList:
      return !list_->items.empty();
    case ValueKind::kDict:
      return !dict_->entries.empty();
    case ValueKind::kNamespace:
    case ValueKind::kFunction:
      return true;
  }
  return false;
}

const void* Value::identity() const {
  switch (kind_) {
    case ValueKind::kList:
      return list_.get();
    case ValueKind::kDict:
    case ValueKind::kNamespace:
      return dict_.get();
    case ValueKind::kFunction:
      return function_.get();
    default:
      return nullptr;
  }
}

bool Value::same_object(const Value& other) const {
  return identity() != nullptr && identity() == other.identity();
}

}  // namespace cairn::jinja
