// Loading a DecoderWeights from an HF folder's tensors ("model.layers.N....")
// for the layouts the families use. Each lookup checks name, shape and dtype;
// norms and biases become f32 (Gemma's `1 + w` folded in when asked).
#pragma once

#include <string>

#include "io/weight_store.h"
#include "model/decoder.h"

namespace cairn {

struct HfLayout {
  bool qkv_bias = false;        // q/k/v_proj.bias (Qwen 2)
  bool qk_norm = false;         // self_attn.q_norm / k_norm (Qwen 3, Gemma 3)
  bool fused_qkv = false;       // self_attn.qkv_proj (Phi-3): split into row views
  bool fused_gate_up = false;   // mlp.gate_up_proj (Phi-3): split into row views
  bool sandwich_norms = false;  // pre/post attention and feed-forward norms (Gemma 2/3)
  bool norm_plus_one = false;   // norms scale by (1 + w): folded into the f32 weights
};

DecoderWeights load_hf_weights(io::WeightStore& ws, const ModelConfig& c, const HfLayout& layout);

// An f32 copy of a [dim] norm (or bias) weight, plus `add` on every element.
Tensor load_f32_vector(io::WeightStore& ws, const std::string& name, int64_t dim, float add);

}  // namespace cairn
