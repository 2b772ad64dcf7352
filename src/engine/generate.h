// The single-sequence generation loop over the paged KV state: prefill the
// prompt in chunks, then decode one token per step until a stop id, the token
// limit or the context's end. The continuous-batching engine replaces it for
// serving; `cairn generate` and `cairn chat` use it directly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/model.h"
#include "sample/sampler.h"

namespace cairn {

// KV storage of the loop's sequence (docs/kv.md). bits 0 keeps full precision.
struct KvSettings {
  int32_t bits = 0;            // 4 or 8: affine-quantized pages
  int32_t group_size = 64;     // 32, 64 or 128 along head_dim
  int64_t quant_start = 0;     // bf16-first: convert once the sequence holds this many positions
  std::string kv_config_path;  // per-layer scheme (kv_config.json); overrides bits when set
  int64_t page_tokens = 32;
  // Full-precision store: "model" (its torch_dtype when bf16/f16, else f32),
  // "f32" (what float32 references hold), "bf16" or "f16".
  std::string dtype = "model";
};

struct GenerateRequest {
  std::vector<int32_t> prompt_ids;     // [n_prompt], BOS included when the model wants one
  int32_t max_tokens = 256;            // tokens to generate at most
  SamplingParams sampling;             // temperature 0 = greedy
  std::vector<int32_t> stop_ids;       // generation ends after emitting one of these
  int32_t prefill_chunk_tokens = 512;  // prompt rows per forward step
  KvSettings kv;
};

enum class FinishReason { kStop, kLength, kCancelled };
const char* finish_reason_name(FinishReason r);

struct GenerateResult {
  std::vector<int32_t> ids;  // generated tokens (a stop id included)
  FinishReason finish = FinishReason::kLength;
  double prefill_seconds = 0.0;
  double decode_seconds = 0.0;  // from the first sampled token to the last
};

// Called with each generated id as soon as it is sampled; return false to stop
// (the result then says kCancelled).
using TokenCallback = std::function<bool(int32_t id)>;

// Throws Error(kInvalidArgument) for an empty prompt, a prompt at or past the
// model's context length, an id outside the vocabulary or bad sampling values.
GenerateResult generate(Model& model, const GenerateRequest& request,
                        const TokenCallback& on_token);

}  // namespace cairn
