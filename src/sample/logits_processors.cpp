#include "sample/logits_processors.h"

#include <cmath>

#include "backend/sample_row.h"
#include "core/error.h"
#include "sample/row_args.h"

namespace cairn {

void validate(const ProcessorParams& p, int32_t vocab) {
  for (auto [id, bias] : p.logit_bias) {
    if (id < 0 || id >= vocab)
      fail(ErrorCode::kInvalidArgument, "logit_bias: token id {} is outside [0, {})", id, vocab);
    if (!std::isfinite(bias) || std::fabs(bias) > 100.0f)
      fail(ErrorCode::kInvalidArgument, "logit_bias: bias {} for id {} is outside [-100, 100]",
           bias, id);
  }
  if (!(p.repetition_penalty > 0.0f) || !std::isfinite(p.repetition_penalty))
    fail(ErrorCode::kInvalidArgument, "repetition_penalty must be > 0, got {}",
         p.repetition_penalty);
  if (p.repetition_window < 0)
    fail(ErrorCode::kInvalidArgument, "repetition window must be ≥ 0, got {}", p.repetition_window);
  if (!(std::fabs(p.presence_penalty) <= 2.0f))
    fail(ErrorCode::kInvalidArgument, "presence_penalty must be in [-2, 2], got {}",
         p.presence_penalty);
  if (!(std::fabs(p.frequency_penalty) <= 2.0f))
    fail(ErrorCode::kInvalidArgument, "frequency_penalty must be in [-2, 2], got {}",
         p.frequency_penalty);
  if (p.min_tokens < 0)
    fail(ErrorCode::kInvalidArgument, "min_tokens must be ≥ 0, got {}", p.min_tokens);
  for (int32_t id : p.eos_ids)
    if (id < 0 || id >= vocab)
      fail(ErrorCode::kInvalidArgument, "stop token id {} is outside [0, {})", id, vocab);
}

void apply_processors(std::span<float> logits, const ProcessorParams& p,
                      std::span<const int32_t> prompt, std::span<const int32_t> generated) {
  const ProcessorLists lists = processor_lists(p, prompt, generated);
  ops::apply_row_processors(logits, sample_row_args({}, 0, -1, p, lists));
}

}  // namespace cairn
