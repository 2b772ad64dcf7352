// Reference logits made by tools/make_fixtures.py (transformers, float32 compute)
// and the helpers the parity tests run the model with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "kv/contiguous_cache.h"
#include "model/model.h"

namespace cairn::test {

struct Reference {
  std::vector<int32_t> prompt_ids;  // [n_prompt]
  std::vector<int32_t> step_ids;    // [n_steps] greedy tokens
  Tensor prompt_logits;             // [n_prompt, vocab] f32
  Tensor step_logits;               // [n_steps, vocab] f32; row s after prompt + step_ids[:s]
  float max_abs_logit = 0.0f;       // over both
};

// Reads FOLDER/reference.json and FOLDER/reference.safetensors.
Reference load_reference(const std::string& folder);

// Runs tokens [begin, end) of `ids` (positions begin..end-1) of one slot; returns
// the last row's logits.
std::vector<float> run_span(Model& m, KvView& kv, int32_t slot, const std::vector<int32_t>& ids,
                            int64_t begin, int64_t end);

// max |a - ref[row]| over the row.
float max_abs_diff(const std::vector<float>& a, const Tensor& ref, int64_t row);
int32_t argmax(const std::vector<float>& v);

}  // namespace cairn::test
