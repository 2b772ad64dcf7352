#include "sample/row_args.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace cairn {
namespace {

// The distinct ids of the last `window` context tokens (0: all of them).
std::vector<int32_t> window_ids(int32_t window, std::span<const int32_t> prompt,
                                std::span<const int32_t> generated) {
  std::unordered_set<int32_t> seen;
  const size_t total = prompt.size() + generated.size();
  const size_t w = window > 0 ? static_cast<size_t>(window) : total;
  for (size_t i = total - std::min(w, total); i < total; ++i)
    seen.insert(i < prompt.size() ? prompt[i] : generated[i - prompt.size()]);
  return {seen.begin(), seen.end()};
}

std::vector<ops::IdCount> id_counts(std::span<const int32_t> generated) {
  std::unordered_map<int32_t, int32_t> counts;
  for (int32_t id : generated) counts[id]++;
  std::vector<ops::IdCount> out;
  out.reserve(counts.size());
  for (auto [id, n] : counts) out.push_back({id, n});
  return out;
}

}  // namespace

ProcessorLists processor_lists(const ProcessorParams& p, std::span<const int32_t> prompt,
                               std::span<const int32_t> generated) {
  ProcessorLists l;
  for (auto [id, bias] : p.logit_bias) l.bias.push_back({id, bias});
  if (p.repetition_penalty != 1.0f)
    l.penalized = window_ids(p.repetition_window, prompt, generated);
  if (p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f) l.counted = id_counts(generated);
  if (static_cast<int32_t>(generated.size()) < p.min_tokens) l.masked = p.eos_ids;
  return l;
}

ops::SampleRow sample_row_args(const SamplingParams& s, uint64_t step, int32_t n_top,
                               const ProcessorParams& p, const ProcessorLists& lists) {
  ops::SampleRow r = chain_row(s, step, n_top);
  r.bias = lists.bias;
  r.repetition_penalty = p.repetition_penalty;
  r.penalized = lists.penalized;
  r.presence_penalty = p.presence_penalty;
  r.frequency_penalty = p.frequency_penalty;
  r.counted = lists.counted;
  r.masked = lists.masked;
  return r;
}

}  // namespace cairn
