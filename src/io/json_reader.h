// Typed reads of JSON files (config.json, generation_config.json, safetensors
// index files) whose errors name the file and the field at fault.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cairn::io {

// Parses a whole JSON file. Error(kBadFile) naming the path when it is missing or malformed.
nlohmann::json read_json_file(const std::string& path);

// Field reads on one JSON object, tied to the file it came from (for messages).
// `req_*` fail with Error(kBadFile) "PATH: field 'KEY' is missing" (or has the wrong type);
// `opt_*` return the fallback when the key is absent or null, and fail on a wrong type.
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string path, std::string prefix = "");

  bool has(const std::string& key) const;  // present and not null
  int64_t req_int(const std::string& key) const;
  int64_t opt_int(const std::string& key, int64_t fallback) const;
  double req_double(const std::string& key) const;
  double opt_double(const std::string& key, double fallback) const;
  std::optional<double> maybe_double(const std::string& key) const;
  bool opt_bool(const std::string& key, bool fallback) const;
  std::string opt_string(const std::string& key, const std::string& fallback) const;
  std::vector<double> opt_doubles(const std::string& key) const;
  // An int or a list of ints (eos_token_id); empty when absent.
  std::vector<int64_t> opt_int_list(const std::string& key) const;
  std::vector<std::string> opt_strings(const std::string& key) const;
  // A nested object (or an empty object when absent); fails when not an object.
  JsonFields child(const std::string& key) const;

  const nlohmann::json& json() const { return *object_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void fail_field(const std::string& key, const std::string& why) const;

 private:
  const nlohmann::json* get(const std::string& key) const;  // null when absent or null
  const nlohmann::json* object_;
  std::string path_;
  std::string prefix_;  // "rope_parameters." for nested objects
};

}  // namespace cairn::io
