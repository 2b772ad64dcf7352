// Row-wise fast paths: RMSNorm, LayerNorm, softmax and log-softmax. Rows are
// split across the pool; a row's sums run in the fixed lane order of the row
// kernels, so a row's result depends only on that row.
#include <cmath>
#include <vector>

#include "backend/cpu/fast/fast.h"
#include "core/thread_pool.h"

namespace cairn::ops::fast {
namespace {

// Calls f(row) for every row of x (last dim d), rows split across the pool.
template <class F>
void rows(const Tensor& x, F&& f) {
  const int64_t d = x.dim(-1), n = d > 0 ? x.numel() / d : 0;
  ThreadPool::global().parallel_for(
      n,
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) f(r, d);
      },
      4096 / (d > 0 ? d : 1) + 1);
}

}  // namespace

void rms_norm(const Tensor& x, const Tensor& w, float eps, Tensor& y) {
  const RowKernels& k = row_kernels();
  rows(x, [&](int64_t r, int64_t d) {
    const float* xr = x.data<float>() + r * d;
    const float ms = k.sum_sq_diff(xr, 0.0f, d) / static_cast<float>(d);
    const float inv = 1.0f / std::sqrt(ms + eps);
    k.normalize(xr, 0.0f, inv, w.data<float>(), nullptr, y.data<float>() + r * d, d);
  });
}

void layer_norm(const Tensor& x, const Tensor& w, const Tensor* b, float eps, Tensor& y) {
  const RowKernels& k = row_kernels();
  rows(x, [&](int64_t r, int64_t d) {
    const float* xr = x.data<float>() + r * d;
    const float mean = k.sum(xr, d) / static_cast<float>(d);
    const float var = k.sum_sq_diff(xr, mean, d) / static_cast<float>(d);
    const float inv = 1.0f / std::sqrt(var + eps);
    k.normalize(xr, mean, inv, w.data<float>(), b ? b->data<float>() : nullptr,
                y.data<float>() + r * d, d);
  });
}

void softmax(const Tensor& x, Tensor& y) {
  const RowKernels& k = row_kernels();
  rows(x, [&](int64_t r, int64_t d) {
    const float* xr = x.data<float>() + r * d;
    float* yr = y.data<float>() + r * d;
    const float s = k.exp_sum(xr, k.max(xr, d), yr, d);
    k.scale(yr, 1.0f / s, yr, d);
  });
}

void log_softmax(const Tensor& x, Tensor& y) {
  const RowKernels& k = row_kernels();
  rows(x, [&](int64_t r, int64_t d) {
    thread_local std::vector<float> tmp;
    if (tmp.size() < static_cast<size_t>(d)) tmp.resize(static_cast<size_t>(d));
    const float* xr = x.data<float>() + r * d;
    const float m = k.max(xr, d);
    const float s = k.exp_sum(xr, m, tmp.data(), d);
    k.sub(xr, m + std::log(s), y.data<float>() + r * d, d);
  });
}

}  // namespace cairn::ops::fast
