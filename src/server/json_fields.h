// Typed reads of request-body fields. Each throws ApiError 400 naming the field
// ("stream_options.include_usage") when the value has the wrong type or range.
// An absent field or a JSON null reads as the default.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace cairn::server {

using nlohmann::json;

// The value of body[name], or nullptr when absent or null. body must be an object.
const json* find_field(const json& body, const std::string& name);

double number_field(const json& body, const std::string& name, double lo, double hi, double def,
                    const std::string& prefix = "");
// Integers only (2.0 is accepted as 2, 2.5 is not).
int64_t int_field(const json& body, const std::string& name, int64_t lo, int64_t hi, int64_t def,
                  const std::string& prefix = "");
bool bool_field(const json& body, const std::string& name, bool def,
                const std::string& prefix = "");
std::string string_field(const json& body, const std::string& name, const std::string& def,
                         const std::string& prefix = "");

// Parses a request body: ApiError 400 (param null) when it is not a JSON object.
json parse_body(const std::string& text);

}  // namespace cairn::server
