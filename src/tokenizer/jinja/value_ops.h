// Conversions and comparisons of template values: printing, JSON text,
// equality, ordering and the bridge to and from nlohmann::json.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>

#include "tokenizer/jinja/value.h"

namespace cairn::jinja {

struct JsonOptions {
  std::optional<int64_t> indent;
  bool ensure_ascii = false;
  bool sort_keys = false;
  std::optional<std::pair<std::string, std::string>> separators;  // item, key
};

// The text `{{ value }}` prints: lists and dicts as JSON (undefined kept as
// "undefined"), floats with a decimal point, booleans as true/false.
std::string to_output_string(const Value& value);
// JSON text as `tojson` writes it; undefined becomes null when asked.
std::string to_json_text(const Value& value, const JsonOptions& options = {},
                         bool undefined_as_null = true, int depth = 0);
// The text a value joins as (JavaScript's String of the raw value).
std::string to_join_string(const Value& value);

// `==`: numbers by value (bools as 0/1 against numbers), strings by content,
// none equals undefined, containers by identity.
bool loose_equals(const Value& a, const Value& b);
// Membership and `unique`: same kind of primitive with the same value, or the same object.
bool strict_equals(const Value& a, const Value& b);
// Ordering for sort/dictsort: numbers (and bools) or strings; anything else raises.
int compare_values(const Value& a, const Value& b, bool case_sensitive);

Value from_json(const nlohmann::ordered_json& json);
nlohmann::ordered_json to_json(const Value& value);

}  // namespace cairn::jinja
