#include "io/gguf.h"

#include <cstring>

#include "core/error.h"

namespace cairn::io {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian uint32
constexpr int kMaxArrayDepth = 4;

size_t scalar_size(GgufType type) {
  switch (type) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
      return 8;
    default:
      return 0;
  }
}

// Bounds-checked little-endian reads; `what` names the key being read.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> bytes, const std::string& path) : bytes_(bytes), path_(path) {}
  size_t pos() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  const uint8_t* here() const { return bytes_.data() + pos_; }

  void need(uint64_t n, std::string_view what) const {
    if (n > remaining())
      fail(ErrorCode::kBadFile, "{}: truncated at byte {} reading {} (needs {} bytes, {} left)",
           path_, pos_, what, n, remaining());
  }
  template <typename T>
  T read(std::string_view what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, here(), sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  void skip(uint64_t n, std::string_view what) {
    need(n, what);
    pos_ += n;
  }
  std::string_view read_string(std::string_view what) {
    const auto n = read<uint64_t>(what);
    need(n, what);
    std::string_view s(reinterpret_cast<const char*>(here()), n);
    pos_ += n;
    return s;
  }

 private:
  std::span<const uint8_t> bytes_;
  const std::string& path_;
  size_t pos_ = 0;
};

GgufType read_type(Cursor& c, const std::string& path, std::string_view key) {
  const auto raw = c.read<uint32_t>(key);
  if (raw > static_cast<uint32_t>(GgufType::kFloat64))
    fail(ErrorCode::kBadFile, "{}: key '{}' has unknown value type {}", path, key, raw);
  return static_cast<GgufType>(raw);
}

void read_scalar(Cursor& c, GgufValue& v, std::string_view key) {
  switch (v.type) {
    case GgufType::kUint8:
      v.u = c.read<uint8_t>(key);
      break;
    case GgufType::kInt8:
      v.i = c.read<int8_t>(key);
      break;
    case GgufType::kUint16:
      v.u = c.read<uint16_t>(key);
      break;
    case GgufType::kInt16:
      v.i = c.read<int16_t>(key);
      break;
    case GgufType::kUint32:
      v.u = c.read<uint32_t>(key);
      break;
    case GgufType::kInt32:
      v.i = c.read<int32_t>(key);
      break;
    case GgufType::kUint64:
      v.u = c.read<uint64_t>(key);
      break;
    case GgufType::kInt64:
      v.i = c.read<int64_t>(key);
      break;
    case GgufType::kFloat32:
      v.f = c.read<float>(key);
      break;
    case GgufType::kFloat64:
      v.f = c.read<double>(key);
      break;
    case GgufType::kBool:
      v.u = c.read<uint8_t>(key) != 0;
      break;
    case GgufType::kString:
      v.str = c.read_string(key);
      break;
    case GgufType::kArray:
      break;
  }
}

void read_value(Cursor& c, GgufValue& v, const std::string& path, std::string_view key, int depth);

void read_array(Cursor& c, GgufValue& v, const std::string& path, std::string_view key, int depth) {
  if (depth > kMaxArrayDepth)
    fail(ErrorCode::kBadFile, "{}: key '{}' nests arrays deeper than {}", path, key,
         kMaxArrayDepth);
  v.elem_type = read_type(c, path, key);
  v.n_elems = c.read<uint64_t>(key);
  const size_t elem_bytes = scalar_size(v.elem_type);
  if (elem_bytes > 0) {
    if (v.n_elems > c.remaining() / elem_bytes)
      fail(ErrorCode::kBadFile, "{}: key '{}' declares {} elements but only {} bytes remain", path,
           key, v.n_elems, c.remaining());
    v.elems = c.here();
    c.skip(v.n_elems * elem_bytes, key);
    return;
  }
  // Strings need at least 8 bytes each, nested arrays 12: a cheap sanity bound.
  if (v.n_elems > c.remaining() / 8)
    fail(ErrorCode::kBadFile, "{}: key '{}' declares {} elements but only {} bytes remain", path,
         key, v.n_elems, c.remaining());
  if (v.elem_type == GgufType::kString) {
    v.strings.reserve(v.n_elems);
    for (uint64_t i = 0; i < v.n_elems; ++i) v.strings.push_back(c.read_string(key));
    return;
  }
  for (uint64_t i = 0; i < v.n_elems; ++i) {  // nested arrays: checked and skipped
    GgufValue inner;
    inner.type = v.elem_type;
    read_value(c, inner, path, key, depth + 1);
  }
}

void read_value(Cursor& c, GgufValue& v, const std::string& path, std::string_view key, int depth) {
  if (v.type == GgufType::kArray) {
    read_array(c, v, path, key, depth);
  } else {
    read_scalar(c, v, key);
  }
}

// One entry of the tensor-info table: name, dims, ggml type, offset.
GgufTensorInfo read_tensor_info(Cursor& c, const std::string& path, size_t alignment, uint64_t t) {
  GgufTensorInfo info;
  info.name = std::string(c.read_string(fmt::format("the name of tensor #{}", t)));
  const auto n_dims = c.read<uint32_t>(info.name);
  if (n_dims > 8)
    fail(ErrorCode::kBadFile, "{}: tensor '{}' has {} dimensions", path, info.name, n_dims);
  uint64_t n_elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    info.dims.push_back(c.read<uint64_t>(info.name));
    if (info.dims.back() != 0 && n_elements > UINT64_MAX / info.dims.back())
      fail(ErrorCode::kBadFile, "{}: tensor '{}' has too many elements", path, info.name);
    n_elements *= info.dims.back();
  }
  info.ggml_type = c.read<uint32_t>(info.name);
  info.offset_bytes = c.read<uint64_t>(info.name);
  if (info.offset_bytes % alignment != 0)
    fail(ErrorCode::kBadFile, "{}: tensor '{}' offset {} is not a multiple of the alignment {}",
         path, info.name, info.offset_bytes, alignment);
  info.size_bytes = ggml_tensor_bytes(info.ggml_type, n_elements).value_or(0);
  return info;
}
}  // namespace

const char* gguf_type_name(GgufType type) {
  static const char* const kNames[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                       "int32",  "float32", "bool",   "string", "array",
                                       "uint64", "int64",   "float64"};
  const auto index = static_cast<uint32_t>(type);
  return index < std::size(kNames) ? kNames[index] : "unknown";
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kUint16:
    case GgufType::kInt16:
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kUint64:
    case GgufType::kInt64:
      return true;
    default:
      return false;
  }
}

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
  auto mapped = MappedFile::open(path);
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->path_ = path;
  file->mapped_ = mapped;
  file->parse_all({mapped->data(), mapped->size_bytes()});
  return file;
}

std::unique_ptr<GgufFile> GgufFile::parse(std::span<const uint8_t> bytes, const std::string& name) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->path_ = name;
  file->parse_all(bytes);
  return file;
}

void GgufFile::parse_all(std::span<const uint8_t> bytes) {
  Cursor c(bytes, path_);
  if (c.read<uint32_t>("the magic") != kMagic)
    fail(ErrorCode::kBadFile, "{}: not a GGUF file (bad magic)", path_);
  version_ = c.read<uint32_t>("the version");
  if (version_ != 2 && version_ != 3)
    fail(ErrorCode::kBadFile, "{}: GGUF version {} is not supported (2 and 3 are)", path_,
         version_);
  const auto n_tensors = c.read<uint64_t>("the tensor count");
  const auto n_kv = c.read<uint64_t>("the metadata count");
  if (n_kv > c.remaining() / 12 || n_tensors > c.remaining() / 24)
    fail(ErrorCode::kBadFile, "{}: {} keys and {} tensors cannot fit in {} bytes", path_, n_kv,
         n_tensors, bytes.size());
  for (uint64_t k = 0; k < n_kv; ++k) {
    const std::string key(c.read_string(fmt::format("the name of metadata key #{}", k)));
    GgufValue v;
    v.type = read_type(c, path_, key);
    read_value(c, v, path_, key, 0);
    if (!values_.emplace(key, std::move(v)).second)
      fail(ErrorCode::kBadFile, "{}: metadata key '{}' appears twice", path_, key);
    keys_.push_back(key);
  }
  if (find("general.alignment")) {
    const int64_t alignment = get_int("general.alignment");
    if (alignment <= 0 || alignment > (1 << 30) || (alignment & (alignment - 1)) != 0)
      fail(ErrorCode::kBadFile, "{}: key 'general.alignment' is {}, not a power of two", path_,
           alignment);
    alignment_ = static_cast<size_t>(alignment);
  }
  for (uint64_t t = 0; t < n_tensors; ++t)
    tensors_.push_back(read_tensor_info(c, path_, alignment_, t));
  data_offset_ = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  for (const GgufTensorInfo& info : tensors_) {
    if (data_offset_ > bytes.size() || info.offset_bytes > bytes.size() - data_offset_ ||
        info.size_bytes > bytes.size() - data_offset_ - info.offset_bytes)
      fail(ErrorCode::kBadFile,
           "{}: tensor '{}' ({} bytes at data offset {}) runs past the end of the file", path_,
           info.name, info.size_bytes, info.offset_bytes);
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = values_.find(std::string(key));
  return it == values_.end() ? nullptr : &it->second;
}

void GgufFile::fail_type(std::string_view key, const GgufValue& v, const char* want) const {
  fail(ErrorCode::kBadFile, "{}: key '{}' holds a {}, expected {}", path_, key,
       gguf_type_name(v.type), want);
}

namespace {
const GgufValue& require(const GgufFile& f, std::string_view key) {
  const GgufValue* v = f.find(key);
  if (!v) fail(ErrorCode::kBadFile, "{}: missing key '{}'", f.path(), key);
  return *v;
}
}  // namespace

std::optional<std::string_view> GgufFile::find_string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::kString) fail_type(key, *v, "a string");
  return v->str;
}

std::optional<int64_t> GgufFile::find_int(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_integer()) fail_type(key, *v, "an integer");
  if (v->u > static_cast<uint64_t>(INT64_MAX))
    fail(ErrorCode::kBadFile, "{}: key '{}' is too large", path_, key);
  return v->i != 0 ? v->i : static_cast<int64_t>(v->u);
}

std::optional<bool> GgufFile::find_bool(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::kBool) fail_type(key, *v, "a bool");
  return v->u != 0;
}

std::string_view GgufFile::get_string(std::string_view key) const {
  require(*this, key);
  return *find_string(key);
}
int64_t GgufFile::get_int(std::string_view key) const {
  require(*this, key);
  return *find_int(key);
}
uint64_t GgufFile::get_uint(std::string_view key) const {
  const int64_t value = get_int(key);
  if (value < 0) fail(ErrorCode::kBadFile, "{}: key '{}' is negative ({})", path_, key, value);
  return static_cast<uint64_t>(value);
}
bool GgufFile::get_bool(std::string_view key) const {
  require(*this, key);
  return *find_bool(key);
}
double GgufFile::get_float(std::string_view key) const {
  const GgufValue& v = require(*this, key);
  if (!v.is_float()) fail_type(key, v, "a float");
  return v.f;
}

const GgufValue* GgufFile::find_array(std::string_view key, GgufType elem_type) const {
  const GgufValue* v = find(key);
  if (!v) return nullptr;
  if (v->type != GgufType::kArray || v->elem_type != elem_type)
    fail(ErrorCode::kBadFile, "{}: key '{}' holds a {} (of {}), expected an array of {}", path_,
         key, gguf_type_name(v->type), gguf_type_name(v->elem_type), gguf_type_name(elem_type));
  return v;
}

double GgufFile::array_float(const GgufValue& v, uint64_t i) {
  if (v.elem_type == GgufType::kFloat32) {
    float x;
    std::memcpy(&x, v.elems + i * 4, 4);
    return x;
  }
  if (v.elem_type == GgufType::kFloat64) {
    double x;
    std::memcpy(&x, v.elems + i * 8, 8);
    return x;
  }
  return static_cast<double>(array_int(v, i));
}

int64_t GgufFile::array_int(const GgufValue& v, uint64_t i) {
  const uint8_t* p = v.elems + i * scalar_size(v.elem_type);
  auto load = [p]<typename T>(T) {
    T x;
    std::memcpy(&x, p, sizeof(T));
    return static_cast<int64_t>(x);
  };
  switch (v.elem_type) {
    case GgufType::kUint8:
    case GgufType::kBool:
      return load(uint8_t{});
    case GgufType::kInt8:
      return load(int8_t{});
    case GgufType::kUint16:
      return load(uint16_t{});
    case GgufType::kInt16:
      return load(int16_t{});
    case GgufType::kUint32:
      return load(uint32_t{});
    case GgufType::kInt32:
      return load(int32_t{});
    case GgufType::kUint64:
      return load(uint64_t{});
    case GgufType::kInt64:
      return load(int64_t{});
    default:
      return 0;
  }
}

std::optional<uint64_t> ggml_tensor_bytes(uint32_t ggml_type, uint64_t n_elements) {
  struct Block {
    uint32_t type, elems, bytes;
  };
  static constexpr Block kBlocks[] = {
      {0, 1, 4},      {1, 1, 2},      {2, 32, 18},   {3, 32, 20},    {6, 32, 22},    {7, 32, 24},
      {8, 32, 34},    {9, 32, 36},    {10, 256, 84}, {11, 256, 110}, {12, 256, 144}, {13, 256, 176},
      {14, 256, 210}, {15, 256, 292}, {16, 256, 66}, {17, 256, 74},  {18, 256, 98},  {19, 256, 50},
      {20, 32, 18},   {21, 256, 110}, {22, 256, 82}, {23, 256, 136}, {24, 1, 1},     {25, 1, 2},
      {26, 1, 4},     {27, 1, 8},     {28, 1, 8},    {29, 256, 56},  {30, 1, 2},     {34, 256, 54},
      {35, 256, 66},  {39, 32, 17},
  };
  for (const Block& b : kBlocks) {
    if (b.type != ggml_type) continue;
    if (n_elements % b.elems != 0) return std::nullopt;
    const uint64_t n_blocks = n_elements / b.elems;
    if (n_blocks > UINT64_MAX / b.bytes) return std::nullopt;
    return n_blocks * b.bytes;
  }
  return std::nullopt;
}

}  // namespace cairn::io
