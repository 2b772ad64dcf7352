#include "cli/device_flag.h"

#include <fmt/core.h>

#include "backend/device.h"
#include "core/error.h"
#include "model/tp/tensor_parallel_model.h"

namespace cairn {

void add_device_flag(CLI::App& cmd, std::string& device) {
  cmd.add_option("--device", device,
                 "where the model runs: cuda, cpu, or auto (a GPU when present)")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}))
      ->capture_default_str();
}

void add_graph_flags(CLI::App& cmd, GraphFlags& flags) {
  cmd.add_flag("--enforce-eager", flags.enforce_eager,
               "run every decode step op by op (no CUDA graphs)");
  cmd.add_option("--max-cudagraph-capture-size", flags.max_capture_size,
                 "largest decode batch replayed from captured CUDA graphs")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--attention-precision", flags.attention_precision,
                 "GPU attention products: exact (q and p in two bf16 parts each, within 1e-5 of "
                 "f32) or fast (rounded once to the KV dtype, as FlashAttention; fewer products)")
      ->check(CLI::IsMember({"exact", "fast"}))
      ->capture_default_str();
}

void apply_attention_precision(const GraphFlags& flags, DeviceKind kind) {
  const bool fast = flags.attention_precision == "fast";
  if (fast && kind == DeviceKind::kCpu)
    fmt::print(stderr,
               "--attention-precision fast: the CPU computes attention in f32 either way\n");
  device_backend(kind).set_fast_attention(fast);
}

Device resolve_device(const std::string& flag) {
  if (flag == "cpu") return Device::cpu();
  if (flag == "cuda") return device_backend(DeviceKind::kCuda).device();  // throws without one
  if (flag != "auto")
    fail(ErrorCode::kInvalidArgument, "--device '{}': expected cuda, cpu or auto", flag);
  try {
    return device_backend(DeviceKind::kCuda).device();
  } catch (const Error&) {
    return Device::cpu();
  }
}

void add_tensor_parallel_flag(CLI::App& cmd, int& n_ranks) {
  cmd.add_option("--tensor-parallel", n_ranks,
                 "split heads, KV heads, MLP rows and vocabulary over N ranks (one GPU each, "
                 "or CPU threads)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

Device resolve_rank_device(const std::string& flag, int n_ranks) {
  if (flag != "auto") return resolve_device(flag);
  const Device d = resolve_device(flag);
  if (d.kind == DeviceKind::kCpu || device_backend(d.kind).device_count() >= n_ranks) return d;
  return Device::cpu();  // fewer GPUs than ranks: the ranks are CPU threads
}

void place_model(std::unique_ptr<Model>& model, const std::string& device, int n_ranks,
                 const GraphFlags& graphs) {
  if (n_ranks == 1) {
    const Device d = resolve_device(device);
    apply_attention_precision(graphs, d.kind);
    model->to_device(d);
    model->set_step_graphs(graphs.max_batch());
    return;
  }
  const Device d = resolve_rank_device(device, n_ranks);
  apply_attention_precision(graphs, d.kind);
  model = tp::make_tensor_parallel(std::move(model), n_ranks);
  model->to_device(d);
}

}  // namespace cairn
