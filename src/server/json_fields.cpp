#include "server/json_fields.h"

#include <fmt/format.h>

#include <cmath>

#include "server/api_error.h"

namespace cairn::server {

namespace {

const char* type_name(const json& v) {
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

[[noreturn]] void wrong_type(const std::string& param, const char* want, const json& v) {
  bad_field(param, fmt::format("{} must be {}, not {}", param, want, type_name(v)));
}

}  // namespace

const json* find_field(const json& body, const std::string& name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

double number_field(const json& body, const std::string& name, double lo, double hi, double def,
                    const std::string& prefix) {
  const json* v = find_field(body, name);
  if (!v) return def;
  std::string param = prefix + name;
  if (!v->is_number()) wrong_type(param, "a number", *v);
  double x = v->get<double>();
  if (!std::isfinite(x) || x < lo || x > hi)
    bad_field(param, fmt::format("{} must be in [{}, {}], got {}", param, lo, hi, v->dump()));
  return x;
}

int64_t int_field(const json& body, const std::string& name, int64_t lo, int64_t hi, int64_t def,
                  const std::string& prefix) {
  const json* v = find_field(body, name);
  if (!v) return def;
  std::string param = prefix + name;
  if (!v->is_number()) wrong_type(param, "an integer", *v);
  bool in_range;
  int64_t x = 0;
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    in_range = u <= static_cast<uint64_t>(hi);
    x = in_range ? static_cast<int64_t>(u) : 0;
    in_range = in_range && x >= lo;
  } else if (v->is_number_integer()) {
    x = v->get<int64_t>();
    in_range = x >= lo && x <= hi;
  } else {
    double d = v->get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) wrong_type(param, "an integer", *v);
    in_range = d >= static_cast<double>(lo) && d <= static_cast<double>(hi);
    x = in_range ? static_cast<int64_t>(d) : 0;
  }
  if (!in_range)
    bad_field(param, fmt::format("{} must be in [{}, {}], got {}", param, lo, hi, v->dump()));
  return x;
}

bool bool_field(const json& body, const std::string& name, bool def, const std::string& prefix) {
  const json* v = find_field(body, name);
  if (!v) return def;
  if (!v->is_boolean()) wrong_type(prefix + name, "a boolean", *v);
  return v->get<bool>();
}

std::string string_field(const json& body, const std::string& name, const std::string& def,
                         const std::string& prefix) {
  const json* v = find_field(body, name);
  if (!v) return def;
  if (!v->is_string()) wrong_type(prefix + name, "a string", *v);
  return v->get<std::string>();
}

json parse_body(const std::string& text) {
  json body = json::parse(text, nullptr, false);
  if (body.is_discarded())
    throw ApiError(400, "invalid_request_error", "the body is not valid JSON (or not valid UTF-8)",
                   "", "invalid_json");
  if (!body.is_object())
    throw ApiError(400, "invalid_request_error",
                   fmt::format("the body must be a JSON object, not {}", type_name(body)), "",
                   "invalid_json");
  return body;
}

}  // namespace cairn::server
