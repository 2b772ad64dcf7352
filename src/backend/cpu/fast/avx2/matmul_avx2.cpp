// Matmul kernels for AVX2 + FMA + F16C (this file is compiled with those flags
// and called only when the processor has them). 8 lanes per accumulator; a
// register tile of 3 x rows × 4 w rows (12 accumulators + 3 x + 1 w = 16 ymm).
#include "backend/cpu/fast/avx2/vec_avx2.h"
#include "backend/cpu/fast/kernels.h"
#include "backend/cpu/fast/matmul_tiles.h"

namespace cairn::ops::fast {

void matmul_cols_avx2(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch) {
  matmul_cols_any<VecAvx2>(a, j_begin, j_end, scratch);
}

}  // namespace cairn::ops::fast
