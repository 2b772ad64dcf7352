// Gemma 3 (text): Gemma 2's sandwich norms, `1 + w` folds and embedding scale,
// plus a per-head q/k RMSNorm (also `1 + w`), a 5:1 sliding/global layer pattern
// (layer_types or sliding_window_pattern), and two rope tables: the local base
// (rope_local_base_freq) on sliding layers, rope_theta with scaling on global ones.
#include <cmath>

#include "model/decoder.h"
#include "model/families/families.h"
#include "model/hf_weights.h"

namespace cairn::families {

std::unique_ptr<Model> load_gemma3_text(const ModelConfig& c, io::WeightStore& ws) {
  HfLayout layout;
  layout.sandwich_norms = true;
  layout.norm_plus_one = true;
  layout.qk_norm = true;
  DecoderWeights w = load_hf_weights(ws, c, layout);
  DecoderOptions o = default_decoder_options(c);  // rope tables: global [0], local [1]
  o.sandwich_norms = true;
  o.embed_scale = static_cast<float>(std::sqrt(static_cast<double>(c.hidden_size)));
  return std::make_unique<DecoderModel>(c, std::move(w), std::move(o));
}

}  // namespace cairn::families
