#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/reference/reference.h"

namespace cairn::ops::ref {
namespace {

bool visible(int32_t q_pos, int32_t kv_pos, int32_t window) {
  return kv_pos <= q_pos && (window <= 0 || kv_pos > q_pos - window);
}

}  // namespace

// For each query and head: scores over every visible key, softmax in double,
// weighted sum of values. A query that sees no key gets zeros.
void attention(const Tensor& q, const Tensor& k, const Tensor& v,
               std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
               const AttentionParams& p, Tensor& out) {
  const int64_t n_q = q.dim(0), n_heads = q.dim(1), head_dim = q.dim(2);
  const int64_t n_kv = k.dim(0), n_kv_heads = k.dim(1), group = n_heads / n_kv_heads;
  std::vector<double> scores(static_cast<size_t>(n_kv));
  std::vector<double> acc(static_cast<size_t>(head_dim));
  for (int64_t t = 0; t < n_q; ++t) {
    for (int64_t h = 0; h < n_heads; ++h) {
      const float* qr = q.data<float>() + (t * n_heads + h) * head_dim;
      const int64_t kvh = h / group;
      double max_score = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < n_kv; ++j) {
        const size_t sj = static_cast<size_t>(j);
        if (!visible(q_positions[static_cast<size_t>(t)], kv_positions[sj], p.window)) {
          scores[sj] = -std::numeric_limits<double>::infinity();
          continue;
        }
        double dot = 0.0;
        for (int64_t c = 0; c < head_dim; ++c)
          dot += static_cast<double>(qr[c]) *
                 load_as_f32(k.raw(), k.dtype(), (j * n_kv_heads + kvh) * head_dim + c);
        double s = dot * p.scale;
        if (p.softcap > 0.0f) s = p.softcap * std::tanh(s / p.softcap);
        scores[sj] = s;
        max_score = std::max(max_score, s);
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      double denom = 0.0;
      for (int64_t j = 0; j < n_kv && std::isfinite(max_score); ++j) {
        const double e = std::exp(scores[static_cast<size_t>(j)] - max_score);
        if (e == 0.0) continue;
        denom += e;
        for (int64_t c = 0; c < head_dim; ++c)
          acc[static_cast<size_t>(c)] +=
              e * load_as_f32(v.raw(), v.dtype(), (j * n_kv_heads + kvh) * head_dim + c);
      }
      float* o = out.data<float>() + (t * n_heads + h) * head_dim;
      for (int64_t c = 0; c < head_dim; ++c)
        o[c] = denom > 0.0 ? static_cast<float>(acc[static_cast<size_t>(c)] / denom) : 0.0f;
    }
  }
}

}  // namespace cairn::ops::ref
