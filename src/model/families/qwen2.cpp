// Qwen 2 / 2.5: Llama with q/k/v biases (always present) and sliding windows
// on layers >= max_window_layers when use_sliding_window is set.
#include "model/decoder.h"
#include "model/families/families.h"
#include "model/hf_weights.h"

namespace cairn::families {

std::unique_ptr<Model> load_qwen2(const ModelConfig& c, io::WeightStore& ws) {
  HfLayout layout;
  layout.qkv_bias = true;
  DecoderWeights w = load_hf_weights(ws, c, layout);
  return std::make_unique<DecoderModel>(c, std::move(w), default_decoder_options(c));
}

}  // namespace cairn::families
