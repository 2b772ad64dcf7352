#include "io/safetensors_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace cairn {
namespace {

size_t entry_bytes(const SafetensorsEntry& e) {
  size_t n = 1;
  for (int64_t d : e.shape) n *= static_cast<size_t>(d);
  return dtype_bytes(e.dtype, n);
}

std::string header_json(const std::vector<SafetensorsEntry>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  size_t offset = 0;
  for (const auto& e : tensors) {
    size_t n = entry_bytes(e);
    h[e.name] = {{"dtype", safetensors_dtype_name(e.dtype)},
                 {"shape", e.shape},
                 {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string s = h.dump();
  s.append((8 - s.size() % 8) % 8, ' ');
  return s;
}

}  // namespace

const char* safetensors_dtype_name(DType t) {
  switch (t) {
    case DType::kF32:
      return "F32";
    case DType::kBF16:
      return "BF16";
    case DType::kF16:
      return "F16";
    case DType::kI8:
      return "I8";
    case DType::kU8:
      return "U8";
    case DType::kI32:
      return "I32";
    default:
      fail(ErrorCode::kUnsupported, "safetensors cannot store dtype {}", dtype_name(t));
  }
}

void write_safetensors(const std::string& path, const std::vector<SafetensorsEntry>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::string header = header_json(tensors, metadata);
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) fail(ErrorCode::kIo, "{}: cannot create: {}", path, std::strerror(errno));
  uint64_t n = header.size();
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(n >> (8 * i));
  bool ok = std::fwrite(len, 1, 8, f.get()) == 8 &&
            std::fwrite(header.data(), 1, header.size(), f.get()) == header.size();
  std::vector<uint8_t> buf;
  for (const auto& e : tensors) {
    if (!ok) break;
    buf.resize(entry_bytes(e));
    e.fill(buf.data(), buf.size());
    ok = std::fwrite(buf.data(), 1, buf.size(), f.get()) == buf.size();
  }
  if (!ok || std::fflush(f.get()) != 0)
    fail(ErrorCode::kIo, "{}: write failed: {}", path, std::strerror(errno));
}

}  // namespace cairn
