// Filter internals shared by filters.cpp (bare filters) and filter_calls.cpp
// (filters with arguments).
#pragma once

#include <optional>
#include <string>

#include "tokenizer/jinja/interpreter.h"

namespace cairn::jinja {

// A filter written without arguments, by name.
Value apply_named_filter(const std::string& name, const Value& operand);
// A filter written as a call: `value | name(args...)`.
Value apply_filter_call(Interpreter& interp, const Value& operand, const Node& call,
                        const ScopePtr& scope);

// Stable sort of a list; `attribute` is a dotted path into each item.
Value sort_values(const Value& list, bool reverse, bool case_sensitive,
                  const std::optional<std::string>& attribute);
// Follows a dotted path ("function.name", "0") through dicts, namespaces and lists.
Value attribute_path(const Value& item, const std::string& path);
Value indent_lines(const std::string& s, int64_t width, bool first, bool blank);
Value round_number(const Value& v, int64_t precision, const std::string& method);
std::string html_escape(const std::string& s);

}  // namespace cairn::jinja
