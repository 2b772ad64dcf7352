// cairn fit PATH --ctx N [--kv-bits b --kv-group-size g --kv-quant-start s]
//                [--batch B] [--memory-budget GB] [--bandwidth GBs] [--params P]
// Prints the bytes a model needs at a context (weights from safetensors
// headers or a parameter count, KV pages, workspace), whether they fit the
// budget, the longest context that does and the decode rate a bandwidth allows.
#include <fmt/format.h>

#include <filesystem>

#include "cli/verbs.h"
#include "core/error.h"
#include "kv/fit.h"
#include "model/registry.h"

namespace cairn {
namespace {

struct FitFlags {
  std::string path;
  int64_t ctx = 0;
  int32_t bits = 0, group_size = 64;
  int64_t quant_start = 0;
  int32_t batch = 1;
  double budget_gb = 0, bandwidth_gbs = 0, params = 0;
};

double gib(int64_t b) {
  return static_cast<double>(b) / (1 << 30);
}

// Config and weight bytes: safetensors headers when present, else params × dtype bytes.
FitInput read_model(const FitFlags& f) {
  namespace fs = std::filesystem;
  std::string dir = fs::is_regular_file(f.path) && fs::path(f.path).filename() == "config.json"
                        ? fs::path(f.path).parent_path().string()
                        : f.path;
  if (dir.empty()) dir = ".";
  FitInput in;
  bool has_weights = false;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      has_weights |= e.path().extension() == ".safetensors";
  in.config = has_weights || fs::is_regular_file(dir) ? inspect_model(dir) : parse_hf_config(dir);
  in.full_store = full_store_for(in.config);
  if (in.full_store == KvStore::kF32 && in.config.torch_dtype.empty())
    in.full_store = KvStore::kBF16;
  const int64_t elem = in.config.torch_dtype == "float32" ? 4 : 2;
  if (f.params > 0)
    in.weight_bytes = static_cast<int64_t>(f.params) * elem;
  else if (in.config.weights.total_bytes > 0)
    in.weight_bytes = in.config.weights.total_bytes;
  else
    in.weight_bytes = estimate_params(in.config) * elem;
  return in;
}

void run_fit(const FitFlags& f) {
  if (f.ctx <= 0) fail(ErrorCode::kInvalidArgument, "--ctx {} must be > 0", f.ctx);
  if (f.batch <= 0) fail(ErrorCode::kInvalidArgument, "--batch {} must be > 0", f.batch);
  FitInput in = read_model(f);
  in.ctx_tokens = f.ctx;
  in.batch = f.batch;
  in.quant = uniform_scheme(in.config, f.bits, f.group_size, f.quant_start);
  in.budget_bytes = static_cast<int64_t>(f.budget_gb * (1 << 30));
  in.bandwidth_gbs = f.bandwidth_gbs;
  FitResult r = plan_fit(in);
  fmt::print("model: {} ({} layers; {})\n", f.path, in.config.n_layers,
             describe_layer_kinds(in.config));
  fmt::print("weights: {} bytes ({:.2f} GiB)\n", in.weight_bytes, gib(in.weight_bytes));
  fmt::print("kv: {} bytes per sequence at {} tokens, {} bytes for {} ({:.2f} GiB)\n",
             r.kv_bytes_per_seq, f.ctx, r.kv_bytes, f.batch, gib(r.kv_bytes));
  fmt::print("workspace: {} bytes ({:.2f} GiB)\n", r.workspace_bytes, gib(r.workspace_bytes));
  fmt::print("total: {} bytes ({:.2f} GiB)\n", r.total_bytes, gib(r.total_bytes));
  if (in.budget_bytes > 0) {
    fmt::print("fits {:.2f} GiB: {}\n", f.budget_gb, r.fits ? "yes" : "no");
    fmt::print("largest context: {}\n", r.max_ctx_tokens);
  }
  if (f.bandwidth_gbs > 0)
    fmt::print("decode: {:.1f} tokens/s per sequence, {:.1f} tokens/s in all at {:.0f} GB/s\n",
               r.decode_tokens_per_s, r.decode_tokens_per_s_all, f.bandwidth_gbs);
}

}  // namespace

void register_fit(CLI::App& app) {
  auto f = std::make_shared<FitFlags>();
  CLI::App* cmd = app.add_subcommand("fit", "Bytes a model needs at a context, and what fits");
  cmd->add_option("path", f->path, "model folder, or a config.json")->required();
  cmd->add_option("--ctx", f->ctx, "positions per sequence")->required();
  cmd->add_option("--kv-bits", f->bits, "KV quantization bits, 4 or 8 (0 = off)");
  cmd->add_option("--kv-group-size", f->group_size, "KV quantization group")->capture_default_str();
  cmd->add_option("--kv-quant-start", f->quant_start, "bf16-first start position");
  cmd->add_option("--batch", f->batch, "sequences at once")->capture_default_str();
  cmd->add_option("--memory-budget", f->budget_gb, "memory budget in GiB");
  cmd->add_option("--bandwidth", f->bandwidth_gbs, "memory bandwidth in GB/s");
  cmd->add_option("--params", f->params, "parameter count when there are no weights");
  cmd->callback([f] { run_fit(*f); });
}

}  // namespace cairn
