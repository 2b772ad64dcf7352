#include "kv/kv_format.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/config.h"

namespace cairn {

size_t LayerFormat::row_bytes(int64_t head_dim) const {
  const auto d = static_cast<size_t>(head_dim);
  switch (store) {
    case KvStore::kF32:
      return d * 4;
    case KvStore::kBF16:
    case KvStore::kF16:
      return d * 2;
    case KvStore::kAffine:
      return d * static_cast<size_t>(bits) / 8 + 4 * (d / static_cast<size_t>(group_size));
  }
  return 0;
}

std::string LayerFormat::name() const {
  switch (store) {
    case KvStore::kF32:
      return "f32";
    case KvStore::kBF16:
      return "bf16";
    case KvStore::kF16:
      return "f16";
    case KvStore::kAffine:
      return fmt::format("q{}g{}", bits, group_size);
  }
  return "?";
}

LayerFormat affine_format(int32_t bits, int32_t group_size) {
  return {KvStore::kAffine, bits, group_size};
}

KvStore full_store_for(const ModelConfig& c) {
  if (c.torch_dtype == "bfloat16") return KvStore::kBF16;
  if (c.torch_dtype == "float16") return KvStore::kF16;
  return KvStore::kF32;
}

LayerFormat full_format(KvStore store) {
  CAIRN_CHECK(store != KvStore::kAffine, "full_format takes a float store");
  return {store, 0, 0};
}

void check_affine(int32_t bits, int32_t group_size, int64_t head_dim, const std::string& what) {
  if (bits != 4 && bits != 8)
    fail(ErrorCode::kInvalidArgument, "{}: kv bits {} is not supported (4 or 8)", what, bits);
  if (group_size != 32 && group_size != 64 && group_size != 128)
    fail(ErrorCode::kInvalidArgument, "{}: kv group size {} is not supported (32, 64 or 128)", what,
         group_size);
  if (head_dim % group_size != 0)
    fail(ErrorCode::kInvalidArgument, "{}: kv group size {} does not divide head_dim {}", what,
         group_size, head_dim);
}

KvQuantScheme uniform_scheme(const ModelConfig& c, int32_t bits, int32_t group_size,
                             int64_t quant_start) {
  KvQuantScheme s;
  s.quant_start = quant_start;
  if (quant_start < 0)
    fail(ErrorCode::kInvalidArgument, "kv quant start {} must be ≥ 0", quant_start);
  if (bits == 0) return s;
  check_affine(bits, group_size, c.head_dim, "--kv-bits/--kv-group-size");
  s.layers.assign(static_cast<size_t>(c.n_layers), affine_format(bits, group_size));
  return s;
}

namespace {

int32_t entry_int(const nlohmann::json& e, const char* key, const std::string& path, size_t i) {
  if (!e.is_object() || !e.contains(key) || !e[key].is_number_integer())
    fail(ErrorCode::kBadFile, "{}: entry {} needs an integer '{}'", path, i, key);
  return e[key].get<int32_t>();
}

}  // namespace

KvQuantScheme scheme_from_kv_config(const ModelConfig& c, const std::string& path, KvStore full,
                                    int64_t quant_start) {
  std::ifstream in(path);
  if (!in) fail(ErrorCode::kBadFile, "{}: cannot open", path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_array())
    fail(ErrorCode::kBadFile, "{}: expected a JSON list of {{layer_idx, bits, group_size}}", path);
  KvQuantScheme s;
  s.quant_start = quant_start;
  s.layers.assign(static_cast<size_t>(c.n_layers), full_format(full));
  for (size_t i = 0; i < j.size(); ++i) {
    int32_t il = entry_int(j[i], "layer_idx", path, i);
    int32_t bits = entry_int(j[i], "bits", path, i);
    int32_t gs = entry_int(j[i], "group_size", path, i);
    if (il < 0 || il >= c.n_layers)
      fail(ErrorCode::kBadFile, "{}: entry {}: layer_idx {} outside [0, {})", path, i, il,
           c.n_layers);
    check_affine(bits, gs, c.head_dim, fmt::format("{}: entry {}", path, i));
    s.layers[static_cast<size_t>(il)] = affine_format(bits, gs);
  }
  return s;
}

int64_t kv_bytes_per_token(const LayerFormat& f, int64_t n_kv_heads, int64_t head_dim) {
  return 2 * n_kv_heads * static_cast<int64_t>(f.row_bytes(head_dim));
}

}  // namespace cairn
