// Phi-3 / Phi-3.5: fused qkv_proj and gate_up_proj (split at load into row views
// of the mapped tensors, no copy), longrope scaling, optional partial rotary.
#include "model/decoder.h"
#include "model/families/families.h"
#include "model/hf_weights.h"

namespace cairn::families {

std::unique_ptr<Model> load_phi3(const ModelConfig& c, io::WeightStore& ws) {
  HfLayout layout;
  layout.fused_qkv = true;
  layout.fused_gate_up = true;
  DecoderWeights w = load_hf_weights(ws, c, layout);
  return std::make_unique<DecoderModel>(c, std::move(w), default_decoder_options(c));
}

}  // namespace cairn::families
