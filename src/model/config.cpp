#include "model/config.h"

#include <filesystem>

#include "core/error.h"
#include "io/json_reader.h"

namespace cairn {
namespace fs = std::filesystem;
namespace {

// Reads one rope object (rope_scaling, rope_parameters or one of its per-layer-type
// entries); fields it lacks keep `base`'s values.
RopeSpec parse_rope_object(const io::JsonFields& f, RopeSpec r, const std::string& model_type) {
  r.type = f.opt_string("rope_type", f.opt_string("type", r.type));
  if (r.type == "su" || (model_type == "phi3" && r.type == "yarn")) r.type = "longrope";
  if (r.type == "dynamic_ntk") r.type = "dynamic";
  r.theta = f.opt_double("rope_theta", r.theta);
  r.partial_rotary_factor = f.opt_double("partial_rotary_factor", r.partial_rotary_factor);
  bool derived = r.type == "yarn" || r.type == "longrope";
  r.factor = f.opt_double("factor", derived ? 0.0 : 1.0);
  r.original_max_position_embeddings =
      f.opt_int("original_max_position_embeddings", r.original_max_position_embeddings);
  r.low_freq_factor = f.opt_double("low_freq_factor", r.low_freq_factor);
  r.high_freq_factor = f.opt_double("high_freq_factor", r.high_freq_factor);
  r.beta_fast = f.opt_double("beta_fast", r.beta_fast);
  r.beta_slow = f.opt_double("beta_slow", r.beta_slow);
  r.truncate = f.opt_bool("truncate", r.truncate);
  r.mscale = f.opt_double("mscale", r.mscale);
  r.mscale_all_dim = f.opt_double("mscale_all_dim", r.mscale_all_dim);
  r.attention_factor = f.opt_double("attention_factor", r.attention_factor);
  r.short_factor = f.opt_doubles("short_factor");
  r.long_factor = f.opt_doubles("long_factor");
  static const char* kKnown[] = {"default", "linear", "dynamic", "llama3", "yarn", "longrope"};
  for (const char* k : kKnown)
    if (r.type == k) return r;
  fail(ErrorCode::kUnsupported,
       "{}: rope type '{}' is not supported (default, linear, dynamic, "
       "llama3, yarn, longrope)",
       f.path(), r.type);
}

void parse_ropes(const io::JsonFields& top, ModelConfig& c) {
  RopeSpec base;
  base.theta = top.opt_double("rope_theta", 10000.0);
  base.partial_rotary_factor = top.opt_double("partial_rotary_factor", 1.0);
  base.original_max_position_embeddings = top.opt_int("original_max_position_embeddings", 0);
  if (top.has("rope_parameters")) {
    io::JsonFields rp = top.child("rope_parameters");
    bool by_type = rp.has("full_attention") || rp.has("sliding_attention");
    if (by_type) {
      c.rope = parse_rope_object(rp.child("full_attention"), base, c.model_type);
      c.rope_local = rp.has("sliding_attention")
                         ? parse_rope_object(rp.child("sliding_attention"), base, c.model_type)
                         : c.rope;
    } else {
      c.rope = parse_rope_object(rp, base, c.model_type);
      c.rope_local = c.rope;
    }
    return;
  }
  c.rope = top.has("rope_scaling")
               ? parse_rope_object(top.child("rope_scaling"), base, c.model_type)
               : base;
  c.rope_local = c.rope;
  if (c.model_type == "gemma3_text" || top.has("rope_local_base_freq")) {
    c.rope_local = base;  // Gemma 3's local layers: plain rope at their own base
    c.rope_local.theta = top.opt_double("rope_local_base_freq", 10000.0);
  }
}

// Per-layer windows from layer_types when present, else each family's own rule.
void parse_windows(const io::JsonFields& top, ModelConfig& c) {
  int64_t w = top.opt_int("sliding_window", 0);
  std::vector<std::string> types = top.opt_strings("layer_types");
  c.layer_window.assign(static_cast<size_t>(c.n_layers), 0);
  if (!types.empty() && static_cast<int64_t>(types.size()) != c.n_layers)
    top.fail_field("layer_types",
                   fmt::format("has {} entries for {} layers", types.size(), c.n_layers));
  const std::string& mt = c.model_type;
  bool qwen = mt == "qwen2" || mt == "qwen3";
  int64_t pattern =
      top.opt_int("sliding_window_pattern", top.opt_int("_sliding_window_pattern", 6));
  for (int64_t il = 0; il < c.n_layers; ++il) {
    bool sliding;
    if (!types.empty()) {
      const std::string& t = types[static_cast<size_t>(il)];
      if (t != "sliding_attention" && t != "full_attention")
        top.fail_field("layer_types",
                       fmt::format("holds '{}' (full_attention or sliding_attention)", t));
      sliding = t == "sliding_attention";
    } else if (mt == "gemma2") {
      sliding = il % 2 == 0;
    } else if (mt == "gemma3_text") {
      sliding = pattern > 0 && (il + 1) % pattern != 0;
    } else if (qwen) {
      sliding =
          top.opt_bool("use_sliding_window", false) && il >= top.opt_int("max_window_layers", 0);
    } else {
      sliding = w > 0;
    }
    if (sliding && w <= 0)
      top.fail_field("sliding_window", "is missing for a sliding-window layer");
    c.layer_window[static_cast<size_t>(il)] = sliding ? static_cast<int32_t>(w) : 0;
  }
}

void parse_token_ids(const io::JsonFields& top, const std::string& folder, ModelConfig& c) {
  std::vector<int64_t> eos = top.opt_int_list("eos_token_id");
  int64_t bos = top.opt_int("bos_token_id", -1);
  fs::path gen = fs::path(folder) / "generation_config.json";
  if (fs::exists(gen)) {
    nlohmann::json g = io::read_json_file(gen.string());
    io::JsonFields gf(g, gen.string());
    if (gf.has("eos_token_id")) eos = gf.opt_int_list("eos_token_id");
    bos = gf.opt_int("bos_token_id", bos);
  }
  c.bos_token_id = static_cast<int32_t>(bos);
  for (int64_t e : eos) c.eos_token_ids.push_back(static_cast<int32_t>(e));
}

void check_positive(const io::JsonFields& top, const char* key, int64_t v) {
  if (v <= 0) top.fail_field(key, fmt::format("= {} must be positive", v));
}

}  // namespace

ModelConfig parse_hf_config(const std::string& folder) {
  std::string path = (fs::path(folder) / "config.json").string();
  nlohmann::json j = io::read_json_file(path);
  io::JsonFields top(j, path);
  ModelConfig c;
  c.path = folder;
  c.format = "hf";
  c.model_type = top.opt_string("model_type", "");
  if (c.model_type.empty()) top.fail_field("model_type", "is missing");
  c.architectures = top.opt_strings("architectures");
  c.vocab_size = top.req_int("vocab_size");
  c.hidden_size = top.req_int("hidden_size");
  c.n_layers = top.req_int("num_hidden_layers");
  c.n_heads = top.req_int("num_attention_heads");
  check_positive(top, "vocab_size", c.vocab_size);
  check_positive(top, "hidden_size", c.hidden_size);
  check_positive(top, "num_hidden_layers", c.n_layers);
  check_positive(top, "num_attention_heads", c.n_heads);
  c.n_kv_heads = top.opt_int("num_key_value_heads", c.n_heads);
  check_positive(top, "num_key_value_heads", c.n_kv_heads);
  if (c.n_heads % c.n_kv_heads != 0)
    top.fail_field("num_key_value_heads", "does not divide num_attention_heads");
  c.head_dim = top.opt_int("head_dim", c.hidden_size / c.n_heads);
  check_positive(top, "head_dim", c.head_dim);
  c.intermediate_size = top.req_int("intermediate_size");
  c.max_position_embeddings = top.req_int("max_position_embeddings");
  c.norm_eps = top.opt_double("rms_norm_eps", top.opt_double("layer_norm_eps", 1e-6));
  c.hidden_act = top.opt_string("hidden_activation", top.opt_string("hidden_act", "silu"));
  c.attention_bias = top.opt_bool("attention_bias", false);
  bool gemma = c.model_type == "gemma2" || c.model_type == "gemma3_text";
  c.tie_word_embeddings = top.opt_bool("tie_word_embeddings", gemma);  // transformers' defaults
  c.torch_dtype = top.opt_string("dtype", top.opt_string("torch_dtype", ""));
  c.query_pre_attn_scalar = top.opt_double("query_pre_attn_scalar", 0.0);
  c.attn_logit_softcap = top.opt_double("attn_logit_softcapping", 0.0);
  c.final_logit_softcap = top.opt_double("final_logit_softcapping", 0.0);
  parse_ropes(top, c);
  parse_windows(top, c);
  parse_token_ids(top, folder, c);
  return c;
}

std::string describe_layer_kinds(const ModelConfig& c) {
  std::map<int32_t, int> counts;
  for (int32_t w : c.layer_window) counts[w]++;
  std::string s;
  for (auto it = counts.rbegin(); it != counts.rend(); ++it) {
    if (!s.empty()) s += ", ";
    s += it->first == 0 ? fmt::format("{} × full", it->second)
                        : fmt::format("{} × sliding {}", it->second, it->first);
  }
  return s;
}

}  // namespace cairn
