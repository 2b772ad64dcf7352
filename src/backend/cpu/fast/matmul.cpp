// The matmul fast path: columns of y (rows of w) are split across the thread
// pool; each output is computed whole by one kernel call, in the fixed lane
// order of kernels.h, so it does not depend on the thread count or on n.
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/fast/fast.h"
#include "backend/cpu/fast/kernels.h"
#include "core/thread_pool.h"

namespace cairn::ops::fast {
namespace {

using ColsFn = void (*)(const MatmulArgs&, int64_t, int64_t, float*);

ColsFn cols_fn(cpu::Isa isa) {
  switch (isa) {
    case cpu::Isa::kAvx512:
      return matmul_cols_avx512;
    case cpu::Isa::kAvx2:
      return matmul_cols_avx2;
    case cpu::Isa::kScalar:
      break;
  }
  return matmul_cols_scalar;
}

// Below this many multiply-adds per thread a loop stays on one thread.
constexpr int64_t kMinWorkPerThread = 1 << 16;

}  // namespace

// Bounds every ISA's blocking (kRows, kCols ≤ 8, lanes ≤ 16): a panel of
// kCols × k and the partial sums of a column chunk (matmul_tiles.h: at most
// kAccFloats, or one column tile of (n + kRows) rows when that is larger).
int64_t matmul_scratch_floats(int64_t n, int64_t k) {
  return 8 * k + 32 * 1024 + (n + 8) * 8 * 16;
}

void run_matmul_cols(const MatmulArgs& a, void (*fn)(const MatmulArgs&, int64_t, int64_t, float*)) {
  const int64_t per_col = a.n * a.k > 0 ? a.n * a.k : 1;
  const int64_t min_chunk = kMinWorkPerThread / per_col + 1;
  ThreadPool::global().parallel_for(
      a.m,
      [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> scratch;
        const auto need = static_cast<size_t>(matmul_scratch_floats(a.n, a.k));
        if (scratch.size() < need) scratch.resize(need);
        fn(a, begin, end, scratch.data());
      },
      min_chunk);
}

MatmulArgs matmul_args(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y) {
  MatmulArgs a;
  a.x = x.data<float>();
  a.w = w.raw();
  a.w_dtype = w.dtype();
  a.bias = bias ? bias->data<float>() : nullptr;
  a.y = y.data<float>();
  a.n = x.dim(0);
  a.k = x.dim(1);
  a.m = w.dim(0);
  return a;
}

void matmul(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y) {
  run_matmul_cols(matmul_args(x, w, bias, y), cols_fn(cpu::active_isa()));
}

}  // namespace cairn::ops::fast
