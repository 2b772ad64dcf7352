#include "io/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"

namespace cairn::io {
namespace {

struct DTypeInfo {
  const char* name;
  size_t elem_bytes;
  bool has_dtype;
  DType dtype;
};

// Every dtype name the format defines; those cairn cannot hold still parse (so a
// file with, say, an I64 buffer loads) but fail when that tensor is asked for.
constexpr DTypeInfo kDTypes[] = {
    {"F32", 4, true, DType::kF32},      {"BF16", 2, true, DType::kBF16},
    {"F16", 2, true, DType::kF16},      {"I32", 4, true, DType::kI32},
    {"I8", 1, true, DType::kI8},        {"U8", 1, true, DType::kU8},
    {"F64", 8, false, DType::kF32},     {"I64", 8, false, DType::kF32},
    {"U64", 8, false, DType::kF32},     {"U32", 4, false, DType::kF32},
    {"I16", 2, false, DType::kF32},     {"U16", 2, false, DType::kF32},
    {"BOOL", 1, false, DType::kF32},    {"F8_E4M3", 1, false, DType::kF32},
    {"F8_E5M2", 1, false, DType::kF32}, {"F8_E8M0", 1, false, DType::kF32},
};

const DTypeInfo* find_dtype(const std::string& name) {
  for (const DTypeInfo& d : kDTypes)
    if (name == d.name) return &d;
  return nullptr;
}

constexpr size_t kMaxHeaderBytes = 100u << 20;  // the format's own limit (100 MB)

SafetensorsEntry parse_entry(const std::string& name, const nlohmann::json& v, size_t data_begin,
                             size_t data_size, const std::string& path) {
  auto bad = [&](const char* why) {
    fail(ErrorCode::kBadFile, "{}: tensor '{}': {}", path, name, why);
  };
  if (!v.is_object()) bad("header entry is not an object");
  auto dt = v.find("dtype");
  auto sh = v.find("shape");
  auto off = v.find("data_offsets");
  if (dt == v.end() || !dt->is_string()) bad("'dtype' missing or not a string");
  if (sh == v.end() || !sh->is_array()) bad("'shape' missing or not a list");
  if (off == v.end() || !off->is_array() || off->size() != 2)
    bad("'data_offsets' is not [begin, end]");
  SafetensorsEntry e;
  e.name = name;
  e.dtype_name = dt->get<std::string>();
  const DTypeInfo* info = find_dtype(e.dtype_name);
  if (info == nullptr)
    fail(ErrorCode::kBadFile, "{}: tensor '{}': unknown dtype '{}'", path, name, e.dtype_name);
  e.has_dtype = info->has_dtype;
  e.dtype = info->dtype;
  if (sh->size() > static_cast<size_t>(kMaxDims)) bad("more dimensions than cairn holds (5)");
  // numel × element size must not overflow; the byte-length check below bounds it.
  uint64_t numel = 1;
  for (const auto& d : *sh) {
    if (!d.is_number_unsigned()) bad("shape holds a value that is not a non-negative integer");
    uint64_t n = d.get<uint64_t>();
    if (n > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(numel, n, &numel))
      bad("shape overflows");
    e.shape.push_back(static_cast<int64_t>(n));
  }
  for (const auto& o : *off)
    if (!o.is_number_unsigned())
      bad("'data_offsets' holds a value that is not a non-negative integer");
  uint64_t begin = (*off)[0].get<uint64_t>();
  uint64_t end = (*off)[1].get<uint64_t>();
  if (begin > end || end > data_size) bad("'data_offsets' lie outside the file's data");
  uint64_t need = 0;
  if (__builtin_mul_overflow(numel, info->elem_bytes, &need)) bad("shape overflows");
  if (need != end - begin)
    fail(ErrorCode::kBadFile, "{}: tensor '{}': shape {} of {} needs {} bytes, offsets give {}",
         path, name, e.shape.to_string(), e.dtype_name, need, end - begin);
  e.offset_bytes = data_begin + static_cast<size_t>(begin);
  e.size_bytes = static_cast<size_t>(end - begin);
  return e;
}

}  // namespace

std::vector<SafetensorsEntry> parse_safetensors_header(const uint8_t* data, size_t size,
                                                       const std::string& path) {
  if (size < 8) fail(ErrorCode::kBadFile, "{}: truncated: {} bytes, no header length", path, size);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
  if (n > size - 8)
    fail(ErrorCode::kBadFile, "{}: truncated or corrupt: header of {} bytes in a file of {}", path,
         n, size);
  if (n > kMaxHeaderBytes)
    fail(ErrorCode::kBadFile, "{}: header of {} bytes is too large", path, n);
  const char* text = reinterpret_cast<const char*>(data + 8);
  nlohmann::json j = nlohmann::json::parse(text, text + n, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    fail(ErrorCode::kBadFile, "{}: corrupt header: not a JSON object", path);
  size_t data_begin = 8 + static_cast<size_t>(n);
  size_t data_size = size - data_begin;
  std::vector<SafetensorsEntry> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    out.push_back(parse_entry(it.key(), it.value(), data_begin, data_size, path));
  }
  return out;
}

std::shared_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  auto f = std::shared_ptr<SafetensorsFile>(new SafetensorsFile());
  try {
    f->file_ = MappedFile::open(path);
  } catch (const Error& e) {
    fail(ErrorCode::kBadFile, "{}", e.what());
  }
  f->entries_ = parse_safetensors_header(f->file_->data(), f->file_->size_bytes(), path);
  for (size_t i = 0; i < f->entries_.size(); ++i) f->index_[f->entries_[i].name] = i;
  return f;
}

const SafetensorsEntry* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

Tensor SafetensorsFile::tensor(const SafetensorsEntry& e) const {
  if (!e.has_dtype)
    fail(ErrorCode::kUnsupported, "{}: tensor '{}' has dtype {}, which cairn does not load", path(),
         e.name, e.dtype_name);
  // Kernels read elements in place: an element that straddles its natural alignment
  // would be undefined behaviour (writers pad the header to 8 bytes, so this never hits).
  size_t align = std::max<size_t>(1, static_cast<size_t>(dtype_bits(e.dtype)) / 8);
  if (e.offset_bytes % align != 0)
    fail(ErrorCode::kBadFile,
         "{}: tensor '{}' starts at byte {}, not aligned to its {}-byte "
         "elements (is the header unpadded?)",
         path(), e.name, e.offset_bytes, align);
  return Tensor::view_of(borrow_mapped(file_, e.offset_bytes, e.size_bytes), 0, e.shape, e.dtype);
}

}  // namespace cairn::io
