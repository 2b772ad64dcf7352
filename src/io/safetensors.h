// safetensors files: an 8-byte little-endian header length N, N bytes of JSON
// naming each tensor's dtype, shape and [begin, end) byte offsets into the data
// that follows. Tensors are returned as views of a read-only memory map, kept in
// their stored dtype.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/storage.h"
#include "core/tensor.h"

namespace cairn::io {

struct SafetensorsEntry {
  std::string name;
  std::string dtype_name;     // as written in the header ("BF16")
  bool has_dtype = false;     // dtype_name maps to a cairn DType
  DType dtype = DType::kF32;  // valid when has_dtype
  Shape shape;
  size_t offset_bytes = 0;  // from the start of the file (header included)
  size_t size_bytes = 0;
};

// Parses and bound-checks the header of a whole safetensors file held in
// [data, data + size): header length against the file size, JSON validity,
// every entry's dtype name, shape and offsets (inside the data section, and
// shape × element size = byte length). `path` only names the file in errors.
// Throws Error(kBadFile). Pure: the fuzz target calls it directly.
std::vector<SafetensorsEntry> parse_safetensors_header(const uint8_t* data, size_t size,
                                                       const std::string& path);

// One mapped safetensors file.
class SafetensorsFile {
 public:
  static std::shared_ptr<SafetensorsFile> open(const std::string& path);

  const std::string& path() const { return file_->path(); }
  size_t size_bytes() const { return file_->size_bytes(); }
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }
  const SafetensorsEntry* find(const std::string& name) const;  // null when absent
  // A view of the mapped bytes. Error(kUnsupported) for a dtype cairn does not hold.
  Tensor tensor(const SafetensorsEntry& entry) const;

 private:
  std::shared_ptr<MappedFile> file_;
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, size_t> index_;
};

}  // namespace cairn::io
