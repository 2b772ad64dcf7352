// The flags of the serving engine (serve, bench --load) and of KV storage
// (also generate and chat), with vLLM's names where it has one.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "engine/engine.h"

namespace cairn {

struct KvFlags {
  KvSettings kv;
  bool kv_config = false;  // read kv_config.json beside the model
};

struct EngineFlags {
  EngineOptions options;
  std::string kv_budget = "auto";  // bytes ("2GiB", "512M", plain) or auto
  std::string prefix_cache_bytes = "256MiB";
  std::string host_cache_bytes = "auto";
  std::string ssd_cache_max_bytes = "16GiB";
  std::string spill_queue_bytes = "256MiB";
  KvFlags kv;
  int tensor_parallel = 1;  // ranks the model is split over (CPU threads)
};

// --kv-bits, --kv-group-size, --kv-quant-start, --kv-dtype, --kv-config.
void add_kv_flags(CLI::App& cmd, KvFlags& f);
// --max-batch-tokens (--max-num-batched-tokens), --max-seqs (--max-num-seqs),
// --max-queue, --kv-budget, --prefix-cache-bytes, --host-cache-bytes, --ssd-cache,
// --ssd-cache-max-bytes,
// --spill-queue-bytes, --generation-checkpoint, --tensor-parallel and the KV flags.
void add_engine_flags(CLI::App& cmd, EngineFlags& f);

// The KV settings for a loaded model (kv_config.json resolved beside it).
KvSettings kv_settings(const KvFlags& f, const std::string& model_path);
// Engine options for a loaded model placed on `device`: sizes parsed, the
// fingerprint of its files, and --kv-budget auto = on the host half the memory
// available now, at most 8 GiB; on a GPU 90% of its free memory (the weights
// already there) less 1 GiB for activations and workspaces; --host-cache-bytes
// auto = off on the host (the pool is host memory), on a GPU a quarter of the
// memory available now, at most 8 GiB.
EngineOptions engine_options(const EngineFlags& f, const std::string& model_path,
                             Device device = Device::cpu());

// "123", "64K", "512MiB", "2G", "1.5GiB" → bytes (K/M/G and KiB/MiB/GiB are
// powers of 1024). Error(kInvalidArgument) naming `flag`.
int64_t parse_bytes(const std::string& text, const std::string& flag);

}  // namespace cairn
