#include <cmath>

#include "backend/cpu/reference/reference.h"

namespace cairn::ops::ref {

// Rows are the last dim of x; every other dim counts rows.
void rms_norm(const Tensor& x, const Tensor& w, float eps, Tensor& y) {
  const int64_t d = x.dim(-1), n = x.numel() / (d ? d : 1);
  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  float* yd = y.data<float>();
  for (int64_t r = 0; r < n; ++r) {
    double ss = 0.0;
    for (int64_t c = 0; c < d; ++c) ss += static_cast<double>(xd[r * d + c]) * xd[r * d + c];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(d) + eps);
    for (int64_t c = 0; c < d; ++c) yd[r * d + c] = static_cast<float>(xd[r * d + c] * inv * wd[c]);
  }
}

void layer_norm(const Tensor& x, const Tensor& w, const Tensor* b, float eps, Tensor& y) {
  const int64_t d = x.dim(-1), n = x.numel() / (d ? d : 1);
  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  float* yd = y.data<float>();
  for (int64_t r = 0; r < n; ++r) {
    double mean = 0.0, var = 0.0;
    for (int64_t c = 0; c < d; ++c) mean += xd[r * d + c];
    mean /= static_cast<double>(d);
    for (int64_t c = 0; c < d; ++c) var += (xd[r * d + c] - mean) * (xd[r * d + c] - mean);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(d) + eps);
    for (int64_t c = 0; c < d; ++c) {
      double v = (xd[r * d + c] - mean) * inv * wd[c];
      if (b) v += b->data<float>()[c];
      yd[r * d + c] = static_cast<float>(v);
    }
  }
}

}  // namespace cairn::ops::ref
