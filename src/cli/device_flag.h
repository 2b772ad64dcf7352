// `--device cuda|cpu|auto`: where a verb runs its model. auto (the default)
// picks the GPU when this build has the CUDA backend and a GPU is present.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "core/storage.h"
#include "model/model.h"

namespace cairn {

void add_device_flag(CLI::App& cmd, std::string& device);

// `--enforce-eager` and `--max-cudagraph-capture-size N` (vLLM's names): on a GPU,
// decode steps of up to N sequences replay captured CUDA graphs (docs/cuda.md). And
// `--attention-precision exact|fast`: the GPU attention's tensor-core products
// (DeviceBackend::set_fast_attention; the CPU computes in f32 either way).
struct GraphFlags {
  bool enforce_eager = false;
  int64_t max_capture_size = kDefaultGraphBatch;
  std::string attention_precision = "exact";
  int64_t max_batch() const { return enforce_eager ? 0 : max_capture_size; }
};
void add_graph_flags(CLI::App& cmd, GraphFlags& flags);
// Sets the backend of `kind`'s attention precision from flags (process-wide: before a run).
void apply_attention_precision(const GraphFlags& flags, DeviceKind kind);

// The device `flag` names. Error(kUnsupported) for cuda without a GPU or a
// CUDA build; Error(kInvalidArgument) for another word.
Device resolve_device(const std::string& flag);

// `--tensor-parallel N` (docs/tensor-parallel.md).
void add_tensor_parallel_flag(CLI::App& cmd, int& n_ranks);

// Where n_ranks tensor-parallel ranks run for `flag`: cuda puts rank r on GPU r; auto does
// when at least n_ranks GPUs are present, else the ranks are CPU threads.
Device resolve_rank_device(const std::string& flag, int n_ranks);

// Places a loaded model: split over n_ranks tensor-parallel ranks on the device
// resolve_rank_device gives (the split model's steps run eagerly), else moved
// to `device` with its decode graphs set from `graphs`.
// Error(kInvalidArgument) from the shard plan for a size the model's heads or
// MLP do not divide, or for cuda with fewer GPUs than ranks.
void place_model(std::unique_ptr<Model>& model, const std::string& device, int n_ranks,
                 const GraphFlags& graphs);

}  // namespace cairn
