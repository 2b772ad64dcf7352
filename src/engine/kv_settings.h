// How the KV pages of a model are stored (docs/kv.md), shared by the
// single-sequence loop and the serving engine.
#pragma once

#include <cstdint>
#include <string>

#include "kv/paged_kv.h"
#include "model/model.h"

namespace cairn {

// bits 0 keeps full precision.
struct KvSettings {
  int32_t bits = 0;            // 4 or 8: affine-quantized pages
  int32_t group_size = 64;     // 32, 64 or 128 along head_dim
  int64_t quant_start = 0;     // bf16-first: convert once the sequence holds this many positions
  std::string kv_config_path;  // per-layer scheme (kv_config.json); overrides bits when set
  int64_t page_tokens = kDefaultPageTokens;
  // Full-precision store: "model" (its torch_dtype when bf16/f16, else f32),
  // "f32" (what float32 references hold), "bf16" or "f16".
  std::string dtype = "model";
};

// PagedKvState options for `cfg` under a byte budget. Error(kInvalidArgument)
// for an unknown dtype; kv_config errors name the file.
PagedKvOptions paged_kv_options(const ModelConfig& cfg, const KvSettings& kv, int64_t budget_bytes);

// PagedKvOptions::device and shard_devices for `m`'s shards (Model::kv_shard_devices: the
// model's device, or each tensor-parallel rank's, its KV heads in its own GPU's memory).
void place_kv(const Model& m, PagedKvOptions& o);

// A short, stable description of the KV scheme ("bf16", "q4g64@512", a kv_config
// hash), folded into prefix-cache namespaces.
std::string kv_scheme_name(const PagedKvOptions& o);

}  // namespace cairn
