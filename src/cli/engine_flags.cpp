#include "cli/engine_flags.h"

#include <unistd.h>

#include <cmath>
#include <fstream>

#include "backend/device.h"
#include "cli/device_flag.h"
#include "core/error.h"
#include "io/fingerprint.h"

namespace cairn {
namespace {

// MemAvailable from /proc/meminfo, in bytes (0 when unknown).
int64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

}  // namespace

int64_t parse_bytes(const std::string& text, const std::string& flag) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    fail(ErrorCode::kInvalidArgument, "{}: '{}' is not a size (e.g. 512MiB, 2G, 1048576)", flag,
         text);
  }
  std::string unit = text.substr(used);
  if (unit.size() == 3 && unit.substr(1) == "iB") unit = unit.substr(0, 1);
  if (unit.size() == 2 && unit[1] == 'B') unit = unit.substr(0, 1);
  double scale = 1;
  if (unit == "K" || unit == "k")
    scale = 1024.0;
  else if (unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (!unit.empty() && unit != "B")
    fail(ErrorCode::kInvalidArgument, "{}: unknown unit '{}' in '{}' (K, M, G, KiB, MiB, GiB)",
         flag, unit, text);
  if (!(value >= 0) || !std::isfinite(value) || value * scale > 9e18)
    fail(ErrorCode::kInvalidArgument, "{}: '{}' is out of range", flag, text);
  return static_cast<int64_t>(value * scale);
}

void add_kv_flags(CLI::App& cmd, KvFlags& f) {
  cmd.add_option("--kv-bits", f.kv.bits, "quantize the KV cache to 4 or 8 bits (0 = off)")
      ->capture_default_str();
  cmd.add_option("--kv-group-size", f.kv.group_size, "KV quantization group: 32, 64 or 128")
      ->capture_default_str();
  cmd.add_option("--kv-quant-start", f.kv.quant_start,
                 "keep full-precision KV until the sequence holds N positions")
      ->capture_default_str();
  cmd.add_option("--kv-dtype", f.kv.dtype, "full-precision KV store: f32, bf16, f16 or model")
      ->capture_default_str();
  cmd.add_flag("--kv-config", f.kv_config,
               "per-layer KV quantization from kv_config.json beside the model");
}

void add_engine_flags(CLI::App& cmd, EngineFlags& f) {
  EngineOptions& o = f.options;
  cmd.add_option("--max-batch-tokens,--max-num-batched-tokens", o.max_batch_tokens,
                 "tokens per step: decode rows plus prefill chunks")
      ->capture_default_str();
  cmd.add_option("--max-seqs,--max-num-seqs", o.max_seqs, "sequences running at once")
      ->capture_default_str();
  cmd.add_option("--max-queue", o.max_queue, "requests waiting at most; more are refused (429)")
      ->capture_default_str();
  cmd.add_option("--kv-budget", f.kv_budget,
                 "KV cache memory, e.g. 2GiB (auto: half the available memory, at most 8 GiB; on a "
                 "GPU 90% of its free memory less 1 GiB)")
      ->capture_default_str();
  cmd.add_option("--prefix-cache-bytes", f.prefix_cache_bytes,
                 "RAM prefix cache cap within the KV budget (0 = off)")
      ->capture_default_str();
  cmd.add_option("--host-cache-bytes", f.host_cache_bytes,
                 "host-RAM prefix tier between GPU memory and the SSD tier, e.g. 8GiB (0 = off; "
                 "auto: on a GPU a quarter of the available memory, at most 8 GiB; off on CPU)")
      ->capture_default_str();
  cmd.add_option("--ssd-cache", o.ssd_cache_dir,
                 "folder of the SSD prefix tier: evicted KV pages survive restarts (off if unset)");
  cmd.add_option("--ssd-cache-max-bytes", f.ssd_cache_max_bytes, "SSD prefix tier cap")
      ->capture_default_str();
  cmd.add_option("--spill-queue-bytes", f.spill_queue_bytes,
                 "pages waiting to be written to the SSD tier at most (older ones are dropped)")
      ->capture_default_str();
  cmd.add_flag("--no-restore-overlap{false}", o.restore_overlap,
               "queue a request only once its pages restored from the SSD tier are all read, "
               "instead of computing the rest of the prompt while later layers are read");
  cmd.add_option("--generation-checkpoint", o.generation_checkpoint_tokens,
                 "every N emitted tokens, checkpoint the generation under --ssd-cache so that an "
                 "identical request resumes it after a crash (0 = off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  add_kv_flags(cmd, f.kv);
  add_tensor_parallel_flag(cmd, f.tensor_parallel);
}

KvSettings kv_settings(const KvFlags& f, const std::string& model_path) {
  KvSettings kv = f.kv;
  if (f.kv_config) kv.kv_config_path = model_path + "/kv_config.json";
  return kv;
}

namespace {

int64_t auto_kv_budget(Device device) {
  if (device.kind == DeviceKind::kCpu) {
    const int64_t avail = available_memory_bytes();
    return avail > 0 ? std::min(avail / 2, int64_t{8} << 30) : int64_t{1} << 30;
  }
  const auto free = static_cast<int64_t>(device_backend(device.kind).free_bytes());
  return std::max<int64_t>(free / 10 * 9 - (int64_t{1} << 30), int64_t{256} << 20);
}

int64_t auto_host_cache(Device device) {
  if (device.kind == DeviceKind::kCpu) return 0;
  const int64_t avail = available_memory_bytes();
  return avail > 0 ? std::min(avail / 4, int64_t{8} << 30) : 0;
}

}  // namespace

EngineOptions engine_options(const EngineFlags& f, const std::string& model_path, Device device) {
  EngineOptions o = f.options;
  o.kv = kv_settings(f.kv, model_path);
  if (f.kv_budget == "auto") {
    o.kv_budget_bytes = auto_kv_budget(device);
  } else {
    o.kv_budget_bytes = parse_bytes(f.kv_budget, "--kv-budget");
  }
  o.prefix_cache_bytes = parse_bytes(f.prefix_cache_bytes, "--prefix-cache-bytes");
  o.host_cache_bytes = f.host_cache_bytes == "auto"
                           ? auto_host_cache(device)
                           : parse_bytes(f.host_cache_bytes, "--host-cache-bytes");
  o.ssd_cache_max_bytes = parse_bytes(f.ssd_cache_max_bytes, "--ssd-cache-max-bytes");
  o.spill_queue_bytes = parse_bytes(f.spill_queue_bytes, "--spill-queue-bytes");
  o.model_fingerprint = io::model_fingerprint(model_path);
  return o;
}

}  // namespace cairn
