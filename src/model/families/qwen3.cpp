// Qwen 3: Llama with a per-head RMSNorm on q and k before rope, and a head_dim
// that need not be hidden / heads.
#include "model/decoder.h"
#include "model/families/families.h"
#include "model/hf_weights.h"

namespace cairn::families {

std::unique_ptr<Model> load_qwen3(const ModelConfig& c, io::WeightStore& ws) {
  HfLayout layout;
  layout.qkv_bias = c.attention_bias;
  layout.qk_norm = true;
  DecoderWeights w = load_hf_weights(ws, c, layout);
  return std::make_unique<DecoderModel>(c, std::move(w), default_decoder_options(c));
}

}  // namespace cairn::families
