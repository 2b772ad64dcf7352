// Llama 2/3.x (rope scaling), Mistral (sliding window on every layer), SmolLM2:
// pre-norm RMSNorm, SiLU-gated MLP, optional attention bias. Nothing to fold.
#include "model/decoder.h"
#include "model/families/families.h"
#include "model/hf_weights.h"

namespace cairn::families {

std::unique_ptr<Model> load_llama(const ModelConfig& c, io::WeightStore& ws) {
  HfLayout layout;
  layout.qkv_bias = c.attention_bias;
  DecoderWeights w = load_hf_weights(ws, c, layout);
  return std::make_unique<DecoderModel>(c, std::move(w), default_decoder_options(c));
}

}  // namespace cairn::families
