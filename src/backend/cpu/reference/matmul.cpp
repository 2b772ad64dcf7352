#include "backend/cpu/reference/reference.h"

namespace cairn::ops::ref {

// y[i, j] = Σ_k x[i, k] w[j, k] (+ bias[j]), summed in double.
void matmul(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y) {
  const int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0);
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      double acc = 0.0;
      for (int64_t c = 0; c < k; ++c)
        acc += static_cast<double>(xd[i * k + c]) * load_as_f32(w.raw(), w.dtype(), j * k + c);
      if (bias) acc += bias->data<float>()[j];
      yd[i * m + j] = static_cast<float>(acc);
    }
  }
}

}  // namespace cairn::ops::ref
