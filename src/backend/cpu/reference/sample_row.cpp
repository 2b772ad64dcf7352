// The reference sampling of one row (backend/sample_row.h).
#include "backend/sample_row.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/philox.h"

namespace cairn::ops {
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

int32_t first_max(std::span<const float> logits) {
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  return static_cast<int32_t>(best);
}

// Greedy: id = argmax; logprobs from the full log-softmax (double, index order).
RowSample sample_greedy(std::span<const float> logits, int32_t n_top) {
  RowSample r;
  r.id = first_max(logits);
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

void repetition_penalty(std::span<float> logits, float penalty, std::span<const int32_t> ids) {
  for (int32_t id : ids) {
    float& l = logits[static_cast<size_t>(id)];
    l = l > 0.0f ? l / penalty : l * penalty;
  }
}

}  // namespace

void apply_row_processors(std::span<float> logits, const SampleRow& row) {
  for (const LogitBias& b : row.bias) logits[static_cast<size_t>(b.id)] += b.bias;
  if (row.repetition_penalty != 1.0f)
    repetition_penalty(logits, row.repetition_penalty, row.penalized);
  if (row.presence_penalty != 0.0f || row.frequency_penalty != 0.0f)
    for (const IdCount& c : row.counted)
      logits[static_cast<size_t>(c.id)] -=
          row.frequency_penalty * static_cast<float>(c.count) + row.presence_penalty;
  for (int32_t id : row.masked)
    logits[static_cast<size_t>(id)] = -std::numeric_limits<float>::infinity();
}

RowSample sample_row(std::span<const float> logits, const SampleRow& row) {
  if (row.temperature == 0.0f) return sample_greedy(logits, row.n_top);
  std::vector<Candidate> c = sorted_candidates(logits, 1.0f / row.temperature, row.top_k);
  std::vector<double> probs = probabilities(c);
  size_t n = nucleus_size(probs, row.top_p, row.min_p);
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) total += probs[i];
  double u = double(philox_uniform(row.seed, row.step)) * total, cum = 0.0;
  size_t chosen = n - 1;
  for (size_t i = 0; i < n; ++i) {
    cum += probs[i];
    if (u < cum) {
      chosen = i;
      break;
    }
  }
  RowSample r;
  r.id = c[chosen].id;
  r.logprob = static_cast<float>(std::log(probs[chosen] / total));
  if (row.n_top < 0) r.logprob = 0.0f;
  for (size_t i = 0; i < std::min(n, static_cast<size_t>(std::max(row.n_top, 0))); ++i)
    r.top.push_back({c[i].id, static_cast<float>(std::log(probs[i] / total))});
  return r;
}

}  // namespace cairn::ops
