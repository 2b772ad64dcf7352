#include "sample/sampler.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "sample/rng.h"

namespace cairn {
namespace {

struct Candidate {
  int32_t id;
  float logit;
};

// Sorted by logit descending, ties by id ascending; truncated to top_k.
std::vector<Candidate> sorted_candidates(std::span<const float> logits, float inv_temp,
                                         int32_t top_k) {
  std::vector<Candidate> c(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) c[i] = {static_cast<int32_t>(i), logits[i] * inv_temp};
  auto before = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  size_t keep = c.size();
  if (top_k > 0) keep = std::min(keep, static_cast<size_t>(top_k));
  std::partial_sort(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(keep), c.end(), before);
  c.resize(keep);
  return c;
}

// Softmax over the (sorted) candidates into probs, in a fixed order.
std::vector<double> probabilities(const std::vector<Candidate>& c) {
  std::vector<double> p(c.size());
  double max_logit = c.front().logit, sum = 0.0;
  for (size_t i = 0; i < c.size(); ++i) sum += p[i] = std::exp(double(c[i].logit) - max_logit);
  for (double& x : p) x /= sum;
  return p;
}

// Number of leading candidates kept by top-p and min-p (at least one).
size_t nucleus_size(const std::vector<double>& p, float top_p, float min_p) {
  size_t n = p.size();
  if (top_p < 1.0f) {
    double cum = 0.0;
    for (size_t i = 0; i < p.size(); ++i) {
      cum += p[i];
      if (cum >= top_p) {
        n = i + 1;
        break;
      }
    }
  }
  if (min_p > 0.0f) {
    double floor = double(min_p) * p.front();
    size_t m = 1;
    while (m < n && p[m] >= floor) ++m;
    n = m;
  }
  return std::max<size_t>(n, 1);
}

}  // namespace

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

// Greedy: id = argmax; logprobs from the full log-softmax (double, index order).
static SampleResult sample_greedy(std::span<const float> logits, int32_t n_top) {
  SampleResult r;
  r.id = argmax(logits);
  if (n_top < 0) return r;  // no logprobs asked: skip the log-softmax over the vocabulary
  double max_logit = logits[static_cast<size_t>(r.id)], sum = 0.0;
  for (float l : logits) sum += std::exp(double(l) - max_logit);
  double log_z = max_logit + std::log(sum);
  r.logprob = static_cast<float>(double(logits[static_cast<size_t>(r.id)]) - log_z);
  if (n_top > 0) {
    for (const Candidate& c : sorted_candidates(logits, 1.0f, n_top))
      r.top.push_back({c.id, static_cast<float>(double(c.logit) - log_z)});
  }
  return r;
}

SampleResult sample(std::span<const float> logits, const SamplingParams& p, uint64_t step,
                    int32_t n_top) {
  if (p.temperature == 0.0f) return sample_greedy(logits, n_top);
  std::vector<Candidate> c = sorted_candidates(logits, 1.0f / p.temperature, p.top_k);
  std::vector<double> probs = probabilities(c);
  size_t n = nucleus_size(probs, p.top_p, p.min_p);
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) total += probs[i];
  double u = double(uniform_at(p.seed, step)) * total, cum = 0.0;
  size_t chosen = n - 1;
  for (size_t i = 0; i < n; ++i) {
    cum += probs[i];
    if (u < cum) {
      chosen = i;
      break;
    }
  }
  SampleResult r;
  r.id = c[chosen].id;
  r.logprob = static_cast<float>(std::log(probs[chosen] / total));
  if (n_top < 0) r.logprob = 0.0f;
  for (size_t i = 0; i < std::min(n, static_cast<size_t>(std::max(n_top, 0))); ++i)
    r.top.push_back({c[i].id, static_cast<float>(std::log(probs[i] / total))});
  return r;
}

int32_t sample_token(std::span<const float> logits, const SamplingParams& p, uint64_t step) {
  return sample(logits, p, step).id;
}

}  // namespace cairn
