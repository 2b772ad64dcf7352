// Softmax and log-softmax, one block per row: the row's max, then Σ exp(x − max),
// each in the fixed order of reduce.cuh (thread t folds groups of 4 elements
// t, t + T, … in increasing order, then block_reduce; T depends on the row
// length alone), so a row's output bits never depend on the other rows.
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/float_load.cuh"
#include "backend/cuda/op_errors.h"
#include "backend/cuda/reduce.cuh"
#include "backend/cuda/softmax.h"

namespace cairn::cuda {
namespace {

// x, y [n, d] (y may alias x). Block r handles row r. expf and logf are the
// accurate library functions (not the __expf intrinsics).
template <int kThreads, bool kLog>
__global__ void softmax_kernel(const float* x, float* y, int64_t d, bool vec) {
  const float* xr = x + blockIdx.x * d;
  float* yr = y + blockIdx.x * d;
  const int64_t groups = (d + 3) / 4;
  float m = -INFINITY;
  for (int64_t g = threadIdx.x; g < groups; g += kThreads) {
    float v[4];
    load_group4(xr, g, d, vec, v);
    for (int j = 0; j < 4; ++j)
      if (4 * g + j < d) m = fmaxf(m, v[j]);
  }
  m = block_reduce<kThreads>(m, MaxOp{});
  float s = 0.0f;
  for (int64_t g = threadIdx.x; g < groups; g += kThreads) {
    float v[4];
    load_group4(xr, g, d, vec, v);
    for (int j = 0; j < 4; ++j)
      if (4 * g + j < d) s = __fadd_rn(s, expf(__fsub_rn(v[j], m)));
  }
  s = block_reduce<kThreads>(s, SumOp{});
  const float log_s = logf(s);
  for (int64_t g = threadIdx.x; g < groups; g += kThreads) {
    float v[4];
    load_group4(xr, g, d, vec, v);
    for (int j = 0; j < 4; ++j) {
      const float z = __fsub_rn(v[j], m);
      v[j] = kLog ? __fsub_rn(z, log_s) : __fdiv_rn(expf(z), s);
    }
    store_group4(yr, g, d, vec, v);
  }
}

template <bool kLog>
void softmax_rows(const char* op, const Tensor& x, Tensor& y) {
  const int64_t d = x.dim(-1), n = d ? x.numel() / d : 0;
  if (n == 0) return;
  if (n > 0x7fffffff) invalid_argument(op, x.describe() + " has more than 2^31 - 1 rows");
  const unsigned grid = static_cast<unsigned>(n);
  const bool vec = d % 4 == 0 && aligned16(x.raw()) && aligned16(y.raw());
  if (d >= kLongRow)
    softmax_kernel<kRowThreadsLong, kLog>
        <<<grid, kRowThreadsLong, 0, stream()>>>(x.data<float>(), y.data<float>(), d, vec);
  else
    softmax_kernel<kRowThreadsShort, kLog>
        <<<grid, kRowThreadsShort, 0, stream()>>>(x.data<float>(), y.data<float>(), d, vec);
  check_launch("softmax_kernel");
}

}  // namespace

void softmax(const Tensor& x, Tensor& y) {
  softmax_rows<false>("softmax", x, y);
}

void log_softmax(const Tensor& x, Tensor& y) {
  softmax_rows<true>("log_softmax", x, y);
}

}  // namespace cairn::cuda
