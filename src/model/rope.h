// Rotary embedding tables: the inverse frequencies and the cos/sin scale a
// RopeSpec implies, computed once at load as transformers does at init.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/ops.h"
#include "model/config.h"

namespace cairn {

struct RopeTable {
  std::vector<float> inv_freq;  // [rotary_dim / 2]
  int rotary_dim = 0;
  float attention_factor = 1.0f;
  ops::RopeLayout layout = ops::RopeLayout::kHalfSplit;

  // Parameters for ops::rope; valid while this table lives.
  ops::RopeParams params() const { return {inv_freq, rotary_dim, layout, attention_factor}; }
};

// `max_position_embeddings` is the model's context length (yarn and longrope read
// it when the spec leaves factor or original length out).
// `dynamic` rope is the plain table (its scaling only starts past the context length).
// `longrope` picks the long factors when the context length exceeds the original
// one, for every position: a fixed choice, so a token's rotation never depends on
// how long its batch or sequence is. Error(kBadFile) for factor lists of the wrong length.
RopeTable make_rope_table(const RopeSpec& spec, int64_t head_dim, int64_t max_position_embeddings);

}  // namespace cairn
