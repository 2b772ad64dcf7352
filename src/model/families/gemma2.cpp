// Gemma 2: sandwich norms, `1 + w` RMSNorms (folded into f32 weights at load),
// embeddings scaled by sqrt(hidden), GELU(tanh) MLP, attention and final logit
// softcaps, scores scaled by query_pre_attn_scalar^-1/2, alternating sliding
// windows (from layer_types, else even layers). Embeddings are always tied.
#include <cmath>

#include "model/decoder.h"
#include "model/families/families.h"
#include "model/hf_weights.h"

namespace cairn::families {

std::unique_ptr<Model> load_gemma2(const ModelConfig& c, io::WeightStore& ws) {
  HfLayout layout;
  layout.sandwich_norms = true;
  layout.norm_plus_one = true;
  DecoderWeights w = load_hf_weights(ws, c, layout);
  DecoderOptions o = default_decoder_options(c);
  o.sandwich_norms = true;
  // Kept as a scale on the looked-up rows: the table is mmap'd and shared with lm_head.
  o.embed_scale = static_cast<float>(std::sqrt(static_cast<double>(c.hidden_size)));
  return std::make_unique<DecoderModel>(c, std::move(w), std::move(o));
}

}  // namespace cairn::families
