// Reading tokenizer.json with errors that name the file and the JSON path
// ("$.pre_tokenizer.pretokenizers[1].type") of the value at fault.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace cairn::tok {

class JsonNode {
 public:
  JsonNode(const nlohmann::json& value, std::string path, const std::string& file)
      : value_(&value), path_(std::move(path)), file_(&file) {}

  const nlohmann::json& value() const { return *value_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
  bool is_null() const { return value_->is_null(); }
  bool has(std::string_view key) const;

  JsonNode at(std::string_view key) const;  // throws when absent
  JsonNode at(size_t index) const;
  size_t size() const;  // elements of an array (throws when not an array)
  std::string string(std::string_view key) const;
  std::string string_or(std::string_view key, std::string fallback) const;  // also for null
  bool bool_or(std::string_view key, bool fallback) const;
  int64_t int_or(std::string_view key, int64_t fallback) const;
  std::string as_string() const;
  int64_t as_int() const;
  [[noreturn]] void fail_here(std::string_view what) const;  // "file: $.path: what"

 private:
  const nlohmann::json* value_;
  std::string path_;
  const std::string* file_;
};

// Parses a whole JSON file; a syntax error names the file and byte offset.
nlohmann::json read_json_file(const std::string& path);
nlohmann::json parse_json_text(std::string_view text, const std::string& name);

}  // namespace cairn::tok
