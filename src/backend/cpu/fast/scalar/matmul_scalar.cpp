// Portable kernels that emulate the vector kernels lane by lane: 8 lanes (the
// AVX2 order, used on processors without AVX2) and 16 lanes (the AVX-512
// order, for tests), giving the vector kernels' results bit for bit.
#include "backend/cpu/fast/kernels.h"
#include "backend/cpu/fast/matmul_tiles.h"
#include "backend/cpu/fast/row_kernels.h"
#include "backend/cpu/fast/scalar/vec_scalar.h"

namespace cairn::ops::fast {

void matmul_cols_scalar(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch) {
  matmul_cols_any<VecScalar<8, 2, 4>>(a, j_begin, j_end, scratch);
}

void matmul_cols_scalar16(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch) {
  matmul_cols_any<VecScalar<16, 2, 4>>(a, j_begin, j_end, scratch);
}

const RowKernels& row_kernels_scalar() {
  static const RowKernels k = make_row_kernels<VecScalar<8, 2, 4>>();
  return k;
}

}  // namespace cairn::ops::fast
