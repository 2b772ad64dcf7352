// ModelConfig: what cairn needs from an HF config.json (+ generation_config.json)
// or a llama2.c header, in typed fields. Both the legacy rope keys (rope_theta,
// rope_scaling, rope_local_base_freq) and the rope_parameters object (single or
// keyed by layer type) are read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cairn {

// One rotary embedding's settings, as written in the config (see rope.h for the
// inverse frequencies they imply).
struct RopeSpec {
  std::string type = "default";  // default, linear, dynamic, llama3, yarn, longrope
  double theta = 10000.0;
  double partial_rotary_factor = 1.0;
  double factor = 1.0;  // 0 when the config leaves it to max / original (yarn, longrope)
  int64_t original_max_position_embeddings = 0;
  double low_freq_factor = 1.0;                   // llama3
  double high_freq_factor = 4.0;                  // llama3
  double beta_fast = 32.0;                        // yarn
  double beta_slow = 1.0;                         // yarn
  bool truncate = true;                           // yarn: round the correction range to whole dims
  double mscale = 0.0;                            // yarn (0: unset)
  double mscale_all_dim = 0.0;                    // yarn (0: unset)
  double attention_factor = 0.0;                  // yarn, longrope (0: derived from factor)
  std::vector<double> short_factor, long_factor;  // longrope, [rotary_dim / 2] each
};

// Parameter count and stored bytes per dtype, for `cairn inspect`.
struct WeightSummary {
  int64_t n_params = 0;
  std::map<std::string, int64_t> bytes_by_dtype;  // "BF16" -> bytes
  int64_t total_bytes = 0;
};

struct ModelConfig {
  std::string path;        // the folder or checkpoint file it came from
  std::string format;      // "hf" or "llama2c"
  std::string model_type;  // config.json's model_type ("llama", "gemma3_text", ...)
  std::vector<std::string> architectures;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t intermediate_size = 0;
  int64_t max_position_embeddings = 0;  // context length
  double norm_eps = 1e-6;
  std::string hidden_act = "silu";
  bool attention_bias = false;
  bool tie_word_embeddings = false;
  std::string torch_dtype;  // "bfloat16", "float32", ... ("" when unknown)

  RopeSpec rope;        // full-attention layers (all layers unless rope_local differs)
  RopeSpec rope_local;  // sliding-window layers (Gemma 3's local base); equals rope otherwise
  bool rope_interleaved = false;  // pairs (2i, 2i+1) as llama2.c, else HF's rotate_half

  std::vector<int32_t> layer_window;  // [n_layers]: 0 = full attention, W = sliding window W

  double query_pre_attn_scalar = 0.0;  // Gemma: scores scale by its -1/2 power (0: head_dim)
  double attn_logit_softcap = 0.0;     // 0: none
  double final_logit_softcap = 0.0;    // 0: none

  int32_t bos_token_id = -1;           // -1 when unknown
  std::vector<int32_t> eos_token_ids;  // generation_config.json's, else config.json's
  WeightSummary weights;               // filled when the weights are opened

  bool is_sliding(int il) const { return layer_window[static_cast<size_t>(il)] > 0; }
};

// Reads PATH/config.json and, when present, PATH/generation_config.json.
// Error(kBadFile) naming the file and the field that is missing or malformed.
ModelConfig parse_hf_config(const std::string& folder);

// "full" or "sliding 512" per distinct layer kind, with counts: "5 × sliding 16, 1 × full".
std::string describe_layer_kinds(const ModelConfig& c);

}  // namespace cairn
