#include "engine/kv_settings.h"

#include <fmt/format.h>

#include "core/error.h"

namespace cairn {

PagedKvOptions paged_kv_options(const ModelConfig& cfg, const KvSettings& kv,
                                int64_t budget_bytes) {
  PagedKvOptions o;
  o.page_tokens = kv.page_tokens;
  o.budget_bytes = budget_bytes;
  if (kv.dtype == "model")
    o.full_store = full_store_for(cfg);
  else if (kv.dtype == "f32")
    o.full_store = KvStore::kF32;
  else if (kv.dtype == "bf16")
    o.full_store = KvStore::kBF16;
  else if (kv.dtype == "f16")
    o.full_store = KvStore::kF16;
  else
    fail(ErrorCode::kInvalidArgument, "kv dtype '{}' (f32, bf16, f16 or model)", kv.dtype);
  if (!kv.kv_config_path.empty())
    o.quant = scheme_from_kv_config(cfg, kv.kv_config_path, *o.full_store, kv.quant_start);
  else
    o.quant = uniform_scheme(cfg, kv.bits, kv.group_size, kv.quant_start);
  return o;
}

std::string kv_scheme_name(const PagedKvOptions& o) {
  std::string name = fmt::format("{}/p{}", full_format(*o.full_store).name(), o.page_tokens);
  if (!o.quant.enabled()) return name;
  name += fmt::format("@{}:", o.quant.quant_start);
  for (const LayerFormat& f : o.quant.layers) name += f.name() + ",";
  return name;
}

void place_kv(const Model& m, PagedKvOptions& o) {
  const std::vector<Device> d = m.kv_shard_devices();
  o.device = d[0];
  o.shard_devices = d.size() > 1 ? d : std::vector<Device>{};
}

}  // namespace cairn
