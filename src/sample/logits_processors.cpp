#include "sample/logits_processors.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"

namespace cairn {
namespace {

void repetition_penalty(std::span<float> logits, const ProcessorParams& p,
                        std::span<const int32_t> prompt, std::span<const int32_t> generated) {
  std::unordered_set<int32_t> seen;
  size_t total = prompt.size() + generated.size();
  size_t window = p.repetition_window > 0 ? static_cast<size_t>(p.repetition_window) : total;
  for (size_t i = total - std::min(window, total); i < total; ++i)
    seen.insert(i < prompt.size() ? prompt[i] : generated[i - prompt.size()]);
  for (int32_t id : seen) {
    float& l = logits[static_cast<size_t>(id)];
    l = l > 0.0f ? l / p.repetition_penalty : l * p.repetition_penalty;
  }
}

void presence_frequency(std::span<float> logits, const ProcessorParams& p,
                        std::span<const int32_t> generated) {
  std::unordered_map<int32_t, int32_t> counts;
  for (int32_t id : generated) counts[id]++;
  for (auto [id, n] : counts)
    logits[static_cast<size_t>(id)] -=
        p.frequency_penalty * static_cast<float>(n) + p.presence_penalty;
}

}  // namespace

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
  for (auto [id, bias] : p.logit_bias) logits[static_cast<size_t>(id)] += bias;
  if (p.repetition_penalty != 1.0f) repetition_penalty(logits, p, prompt, generated);
  if (p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f)
    presence_frequency(logits, p, generated);
  if (static_cast<int32_t>(generated.size()) < p.min_tokens)
    for (int32_t id : p.eos_ids)
      logits[static_cast<size_t>(id)] = -std::numeric_limits<float>::infinity();
}

}  // namespace cairn
