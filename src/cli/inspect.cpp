#include "cli/inspect.h"

#include <fmt/format.h>

#include <cstdio>

#include "model/registry.h"

namespace cairn {
namespace {

std::string human_count(int64_t n) {
  if (n >= 1000000000) return fmt::format("{:.2f}B", static_cast<double>(n) / 1e9);
  if (n >= 1000000) return fmt::format("{:.1f}M", static_cast<double>(n) / 1e6);
  if (n >= 1000) return fmt::format("{:.1f}K", static_cast<double>(n) / 1e3);
  return std::to_string(n);
}

std::string human_bytes(int64_t n) {
  if (n >= (1LL << 30)) return fmt::format("{:.2f} GiB", static_cast<double>(n) / (1LL << 30));
  if (n >= (1LL << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1LL << 20));
  if (n >= (1LL << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(n) / (1LL << 10));
  return fmt::format("{} B", n);
}

std::string describe_rope(const RopeSpec& r) {
  std::string s = fmt::format("{} theta {:g}", r.type, r.theta);
  if (r.factor != 1.0 && r.factor != 0.0) s += fmt::format(" factor {:g}", r.factor);
  if (r.original_max_position_embeddings > 0)
    s += fmt::format(" original context {}", r.original_max_position_embeddings);
  if (r.partial_rotary_factor != 1.0) s += fmt::format(" partial {:g}", r.partial_rotary_factor);
  return s;
}

std::string join_ids(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : ", ") + std::to_string(id);
  return s.empty() ? "-" : s;
}

}  // namespace

std::string describe_model(const ModelConfig& c) {
  std::string arch = c.model_type;
  if (!c.architectures.empty()) arch += " (" + c.architectures[0] + ")";
  if (c.format == "llama2c") arch += " (llama2.c checkpoint)";
  std::string bytes;
  for (const auto& [dtype, n] : c.weights.bytes_by_dtype)
    bytes += fmt::format("{}{} {}", bytes.empty() ? "" : ", ", dtype, human_bytes(n));
  std::string out;
  auto line = [&](const char* key, const std::string& v) {
    out += fmt::format("{:<16}{}\n", key, v);
  };
  line("path:", c.path);
  line("architecture:", arch);
  line("parameters:", fmt::format("{} ({})", c.weights.n_params, human_count(c.weights.n_params)));
  line("weights:", fmt::format("{} (files {})", bytes, human_bytes(c.weights.total_bytes)));
  if (!c.torch_dtype.empty()) line("config dtype:", c.torch_dtype);
  line("context length:", std::to_string(c.max_position_embeddings));
  line("layers:", fmt::format("{}: {}", c.n_layers, describe_layer_kinds(c)));
  line("shape:",
       fmt::format("hidden {}, heads {} (kv {}), head_dim {}, ffn {}, vocab {}", c.hidden_size,
                   c.n_heads, c.n_kv_heads, c.head_dim, c.intermediate_size, c.vocab_size));
  line("rope:", describe_rope(c.rope) + (c.rope_interleaved ? ", interleaved pairs" : ""));
  bool local_differs = c.rope_local.theta != c.rope.theta || c.rope_local.type != c.rope.type;
  if (local_differs) line("rope (sliding):", describe_rope(c.rope_local));
  if (c.attn_logit_softcap > 0 || c.final_logit_softcap > 0)
    line("softcaps:",
         fmt::format("attention {:g}, final {:g}", c.attn_logit_softcap, c.final_logit_softcap));
  line("embeddings:", c.tie_word_embeddings ? "tied" : "untied");
  line("bos / eos:", fmt::format("{} / {}", c.bos_token_id, join_ids(c.eos_token_ids)));
  return out;
}

void register_inspect(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("inspect", "Print a model's architecture, size and context length");
  auto path = std::make_shared<std::string>();
  cmd->add_option("path", *path, "HF model folder or llama2.c checkpoint")->required();
  cmd->callback([path] { std::fputs(describe_model(inspect_model(*path)).c_str(), stdout); });
}

}  // namespace cairn
