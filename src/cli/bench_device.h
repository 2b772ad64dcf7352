// `cairn bench --device cuda`: random bf16 weights of real shapes made on the
// GPU (Llama-3.1-8B, Qwen3-8B, Gemma-3-12B), then decode at batch 1 and at
// several batch sizes, and a long prefill, each figure against the limits
// measured in the same run (copy bandwidth, cuBLAS bf16 GEMM rate); for the
// first shape also decode at a long context (bf16, 8-bit and 4-bit KV) and the
// cost of batch invariance. Split over tensor-parallel ranks, decode and prefill.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/storage.h"
#include "engine/kv_settings.h"
#include "model/model.h"

namespace cairn {

struct DeviceBenchFlags {
  std::vector<std::string> shapes = {"llama-3.1-8b", "qwen3-8b", "gemma-3-12b"};
  int32_t prompt_tokens = 512;  // context of each sequence before decode
  int32_t decode_tokens = 32;   // decode steps timed (median)
  std::vector<int32_t> batches = {16, 64, 128};
  int32_t prefill_tokens = 8192;  // one long prompt
  int32_t long_context = 32768;   // decode at batch 1 over this much KV (first shape only)
  int32_t kv_group_size = KvSettings{}.group_size;  // the long decode's 8-bit and 4-bit KV
  std::string work_dir = "/tmp/cairn-bench";
  bool profile_ops = false;  // --profile-ops (the CPU bench's too): every op's times in a table
  int64_t max_graph_batch = kDefaultGraphBatch;  // --max-cudagraph-capture-size, 0: --enforce-eager
  // --tensor-parallel N: the shape split over N ranks, rank r on GPU rank_devices[r] (default
  // 0 … N-1; --rank-devices 0,0 puts two ranks on one GPU, to time what the split costs there).
  // Decode and prefill only, eagerly.
  int tensor_parallel = 1;
  std::vector<int> rank_devices;
  // --layers N: each shape's first N layers only (0: all), e.g. a 70B shape's layers on one GPU
  // that cannot hold all 80; the figures' limits count the layers made.
  int32_t layers = 0;
  // --contiguous-kv: the KV in one contiguous buffer a sequence (DeviceKvCache, random values)
  // instead of the engine's paged state (pages of 32 tokens; the long context's 8-bit and
  // 4-bit KV quantized from the first append), which serve and generate hold and the bench
  // times by default.
  bool contiguous_kv = false;
};

// The named shapes run_device_bench knows.
std::vector<std::string> device_bench_shapes();

// Shape `name`'s config, of its first `layers` layers where layers > 0 (its config.json written
// under work_dir/name, or work_dir/name-<layers>).
ModelConfig device_bench_config(const std::string& name, const std::string& work_dir,
                                int32_t layers = 0);
// A random-weight bf16 model of shape `name` on `device` (device_bench_config's config),
// configured as its family's loader would.
std::unique_ptr<Model> make_device_bench_model(const std::string& name, const std::string& work_dir,
                                               Device device, int32_t layers = 0);
// Bytes of bf16 weights one decode step streams: every layer's projections and the LM head (the
// input embedding is one row a token, noise).
int64_t bench_weight_bytes(const ModelConfig& c);

void run_device_bench(const DeviceBenchFlags& f, Device device);

}  // namespace cairn
