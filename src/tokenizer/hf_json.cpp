#include "tokenizer/hf_json.h"

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace cairn::tok {

bool JsonNode::has(std::string_view key) const {
  return value_->is_object() && value_->contains(key);
}

void JsonNode::fail_here(std::string_view what) const {
  fail(ErrorCode::kBadFile, "{}: {}: {}", *file_, path_, what);
}

JsonNode JsonNode::at(std::string_view key) const {
  if (!value_->is_object()) fail_here("expected an object");
  auto it = value_->find(key);
  if (it == value_->end()) fail(ErrorCode::kBadFile, "{}: {}.{}: missing", *file_, path_, key);
  return JsonNode(*it, path_ + "." + std::string(key), *file_);
}

JsonNode JsonNode::at(size_t index) const {
  if (!value_->is_array() || index >= value_->size()) fail_here("expected an array");
  return JsonNode((*value_)[index], path_ + "[" + std::to_string(index) + "]", *file_);
}

size_t JsonNode::size() const {
  if (!value_->is_array()) fail_here("expected an array");
  return value_->size();
}

std::string JsonNode::as_string() const {
  if (!value_->is_string()) fail_here("expected a string");
  return value_->get<std::string>();
}

int64_t JsonNode::as_int() const {
  if (!value_->is_number_integer()) fail_here("expected an integer");
  return value_->get<int64_t>();
}

std::string JsonNode::string(std::string_view key) const {
  return at(key).as_string();
}

std::string JsonNode::string_or(std::string_view key, std::string fallback) const {
  if (!has(key) || (*value_)[std::string(key)].is_null()) return fallback;
  return at(key).as_string();
}

bool JsonNode::bool_or(std::string_view key, bool fallback) const {
  if (!has(key) || (*value_)[std::string(key)].is_null()) return fallback;
  const JsonNode node = at(key);
  if (!node.value().is_boolean()) node.fail_here("expected true or false");
  return node.value().get<bool>();
}

int64_t JsonNode::int_or(std::string_view key, int64_t fallback) const {
  if (!has(key) || (*value_)[std::string(key)].is_null()) return fallback;
  return at(key).as_int();
}

nlohmann::json parse_json_text(std::string_view text, const std::string& name) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Parse again with exceptions for the position of the error.
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      fail(ErrorCode::kBadFile, "{}: malformed JSON at byte {}: {}", name, e.byte, e.what());
    } catch (const nlohmann::json::exception& e) {
      fail(ErrorCode::kBadFile, "{}: malformed JSON: {}", name, e.what());
    }
  }
  return j;
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail(ErrorCode::kIo, "{}: cannot open", path);
  std::stringstream ss;
  ss << file.rdbuf();
  return parse_json_text(ss.str(), path);
}

}  // namespace cairn::tok
