#include "sample/sampler.h"

#include <cmath>

#include "backend/sample_row.h"
#include "core/error.h"

namespace cairn {

void validate(const SamplingParams& p) {
  if (!(p.temperature >= 0.0f) || !std::isfinite(p.temperature))
    fail(ErrorCode::kInvalidArgument, "temperature must be ≥ 0, got {}", p.temperature);
  if (p.top_k < 0) fail(ErrorCode::kInvalidArgument, "top_k must be ≥ 0, got {}", p.top_k);
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f))
    fail(ErrorCode::kInvalidArgument, "top_p must be in (0, 1], got {}", p.top_p);
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f))
    fail(ErrorCode::kInvalidArgument, "min_p must be in [0, 1], got {}", p.min_p);
}

int32_t argmax(std::span<const float> logits) {
  CAIRN_CHECK(!logits.empty(), "argmax of no logits");
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  return static_cast<int32_t>(best);
}

// The chain is backend/sample_row.h's, the CPU entry of ops::sample_rows.
SampleResult sample(std::span<const float> logits, const SamplingParams& p, uint64_t step,
                    int32_t n_top) {
  CAIRN_CHECK(!logits.empty(), "sampling no logits");
  const ops::RowSample r = ops::sample_row(logits, chain_row(p, step, n_top));
  SampleResult out{r.id, r.logprob, {}};
  out.top.reserve(r.top.size());
  for (const ops::TopLogprob& t : r.top) out.top.push_back({t.id, t.logprob});
  return out;
}

ops::SampleRow chain_row(const SamplingParams& p, uint64_t step, int32_t n_top) {
  ops::SampleRow row;
  row.temperature = p.temperature;
  row.top_k = p.top_k;
  row.top_p = p.top_p;
  row.min_p = p.min_p;
  row.seed = p.seed;
  row.step = step;
  row.n_top = n_top;
  return row;
}

int32_t sample_token(std::span<const float> logits, const SamplingParams& p, uint64_t step) {
  return sample(logits, p, step).id;
}

}  // namespace cairn
