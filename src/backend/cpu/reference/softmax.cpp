#include <cmath>
#include <limits>

#include "backend/cpu/reference/reference.h"

namespace cairn::ops::ref {
namespace {

// Row r of x, as (max, log Σ exp(x - max)) in double.
void row_stats(const float* x, int64_t d, double* max_out, double* log_sum_out) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < d; ++c) m = std::max(m, static_cast<double>(x[c]));
  double s = 0.0;
  for (int64_t c = 0; c < d; ++c) s += std::exp(x[c] - m);
  *max_out = m;
  *log_sum_out = std::log(s);
}

template <bool kLog>
void softmax_rows(const Tensor& x, Tensor& y) {
  const int64_t d = x.dim(-1), n = d ? x.numel() / d : 0;
  for (int64_t r = 0; r < n; ++r) {
    const float* xr = x.data<float>() + r * d;
    float* yr = y.data<float>() + r * d;
    double m, log_sum;
    row_stats(xr, d, &m, &log_sum);
    for (int64_t c = 0; c < d; ++c) {
      const double z = xr[c] - m - log_sum;
      yr[c] = static_cast<float>(kLog ? z : std::exp(z));
    }
  }
}

}  // namespace

void softmax(const Tensor& x, Tensor& y) {
  softmax_rows<false>(x, y);
}
void log_softmax(const Tensor& x, Tensor& y) {
  softmax_rows<true>(x, y);
}

}  // namespace cairn::ops::ref
