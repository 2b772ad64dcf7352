#include "io/json_reader.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace cairn::io {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorCode::kBadFile, "{}: cannot open (missing or unreadable)", path);
  std::stringstream buf;
  buf << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(buf.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail(ErrorCode::kBadFile, "{}: not valid JSON", path);
  return j;
}

JsonFields::JsonFields(const nlohmann::json& object, std::string path, std::string prefix)
    : object_(&object), path_(std::move(path)), prefix_(std::move(prefix)) {
  if (!object.is_object())
    fail(ErrorCode::kBadFile, "{}: '{}' is not a JSON object", path_,
         prefix_.empty() ? "top level" : prefix_);
}

void JsonFields::fail_field(const std::string& key, const std::string& why) const {
  fail(ErrorCode::kBadFile, "{}: field '{}{}' {}", path_, prefix_, key, why);
}

const nlohmann::json* JsonFields::get(const std::string& key) const {
  auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) return nullptr;
  return &*it;
}

bool JsonFields::has(const std::string& key) const {
  return get(key) != nullptr;
}

int64_t JsonFields::opt_int(const std::string& key, int64_t fallback) const {
  const nlohmann::json* v = get(key);
  if (v == nullptr) return fallback;
  if (v->is_number_integer()) return v->get<int64_t>();
  // Some configs write integral values as floats (e.g. 4096.0).
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (std::floor(d) == d && std::abs(d) < 9e15) return static_cast<int64_t>(d);
  }
  fail_field(key, "is not an integer");
}

int64_t JsonFields::req_int(const std::string& key) const {
  if (!has(key)) fail_field(key, "is missing");
  return opt_int(key, 0);
}

std::optional<double> JsonFields::maybe_double(const std::string& key) const {
  const nlohmann::json* v = get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) fail_field(key, "is not a number");
  return v->get<double>();
}

double JsonFields::opt_double(const std::string& key, double fallback) const {
  return maybe_double(key).value_or(fallback);
}

double JsonFields::req_double(const std::string& key) const {
  if (!has(key)) fail_field(key, "is missing");
  return *maybe_double(key);
}

bool JsonFields::opt_bool(const std::string& key, bool fallback) const {
  const nlohmann::json* v = get(key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) fail_field(key, "is not a boolean");
  return v->get<bool>();
}

std::string JsonFields::opt_string(const std::string& key, const std::string& fallback) const {
  const nlohmann::json* v = get(key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) fail_field(key, "is not a string");
  return v->get<std::string>();
}

std::vector<double> JsonFields::opt_doubles(const std::string& key) const {
  std::vector<double> out;
  const nlohmann::json* v = get(key);
  if (v == nullptr) return out;
  if (!v->is_array()) fail_field(key, "is not a list of numbers");
  for (const auto& e : *v) {
    if (!e.is_number()) fail_field(key, "is not a list of numbers");
    out.push_back(e.get<double>());
  }
  return out;
}

std::vector<int64_t> JsonFields::opt_int_list(const std::string& key) const {
  std::vector<int64_t> out;
  const nlohmann::json* v = get(key);
  if (v == nullptr) return out;
  if (v->is_number_integer()) return {v->get<int64_t>()};
  if (!v->is_array()) fail_field(key, "is not an integer or a list of integers");
  for (const auto& e : *v) {
    if (!e.is_number_integer()) fail_field(key, "is not an integer or a list of integers");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

std::vector<std::string> JsonFields::opt_strings(const std::string& key) const {
  std::vector<std::string> out;
  const nlohmann::json* v = get(key);
  if (v == nullptr) return out;
  if (!v->is_array()) fail_field(key, "is not a list of strings");
  for (const auto& e : *v) {
    if (!e.is_string()) fail_field(key, "is not a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

JsonFields JsonFields::child(const std::string& key) const {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json* v = get(key);
  if (v == nullptr) return JsonFields(kEmpty, path_, prefix_ + key + ".");
  if (!v->is_object()) fail_field(key, "is not an object");
  return JsonFields(*v, path_, prefix_ + key + ".");
}

}  // namespace cairn::io
