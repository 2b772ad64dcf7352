// GGUF reader (versions 2 and 3): header, typed metadata (all value types,
// arrays included), the tensor-info table, alignment and the data offset.
// Everything is read from a memory map and bound-checked: a truncated or corrupt
// file is a cairn::Error naming the file and the key or tensor at fault.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/storage.h"

namespace cairn::io {

enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

const char* gguf_type_name(GgufType type);

// One metadata value. Scalars are widened into the matching field; strings and
// array contents are views into the mapped file (valid while the GgufFile lives).
struct GgufValue {
  GgufType type = GgufType::kUint8;
  uint64_t u = 0;  // unsigned integers and bool
  int64_t i = 0;   // signed integers
  double f = 0;    // floats
  std::string_view str;
  // Arrays: element type, count, and (numeric) the raw little-endian elements.
  GgufType elem_type = GgufType::kUint8;
  uint64_t n_elems = 0;
  const uint8_t* elems = nullptr;
  std::vector<std::string_view> strings;  // string arrays only

  bool is_integer() const;
  bool is_float() const { return type == GgufType::kFloat32 || type == GgufType::kFloat64; }
};

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ne[0] first (the fastest-varying dimension)
  uint32_t ggml_type = 0;
  uint64_t offset_bytes = 0;  // from the start of the data section
  uint64_t size_bytes = 0;    // 0 when the ggml type is unknown to cairn
};

class GgufFile {
 public:
  // Maps and parses path. Throws Error(kIo) when it cannot be opened, kBadFile when corrupt.
  static std::unique_ptr<GgufFile> open(const std::string& path);
  // Parses bytes already in memory (kept alive by the caller); name is used in messages.
  static std::unique_ptr<GgufFile> parse(std::span<const uint8_t> bytes, const std::string& name);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  size_t alignment() const { return alignment_; }
  size_t data_offset() const { return data_offset_; }
  const std::vector<std::string>& keys() const { return keys_; }
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const std::shared_ptr<MappedFile>& mapped() const { return mapped_; }  // null after parse()

  const GgufValue* find(std::string_view key) const;  // nullptr when absent
  // Typed access: throws Error(kBadFile) naming the file and key when the key is
  // missing (for get_*) or holds another type.
  std::string_view get_string(std::string_view key) const;
  uint64_t get_uint(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::optional<std::string_view> find_string(std::string_view key) const;
  std::optional<int64_t> find_int(std::string_view key) const;  // any integer type
  std::optional<bool> find_bool(std::string_view key) const;
  // An array of the given element type; throws when present with another type.
  const GgufValue* find_array(std::string_view key, GgufType elem_type) const;
  // Element i of a numeric array as double / int64 (bounds checked by the caller: i < n_elems).
  static double array_float(const GgufValue& v, uint64_t i);
  static int64_t array_int(const GgufValue& v, uint64_t i);

 private:
  GgufFile() = default;
  void parse_all(std::span<const uint8_t> bytes);
  [[noreturn]] void fail_type(std::string_view key, const GgufValue& v, const char* want) const;

  std::string path_;
  std::shared_ptr<MappedFile> mapped_;
  uint32_t version_ = 0;
  size_t alignment_ = 32;
  size_t data_offset_ = 0;
  std::vector<std::string> keys_;
  std::unordered_map<std::string, GgufValue> values_;
  std::vector<GgufTensorInfo> tensors_;
};

// Bytes a tensor of this ggml type and element count takes; nullopt when unknown.
std::optional<uint64_t> ggml_tensor_bytes(uint32_t ggml_type, uint64_t n_elements);

}  // namespace cairn::io
