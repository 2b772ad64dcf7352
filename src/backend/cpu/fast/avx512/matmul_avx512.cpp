// Matmul kernels for AVX-512 F/BW/VL (+ FMA, F16C); compiled with those flags
// and called only when the processor has them. 16 lanes per accumulator; a
// register tile of 4 x rows × 4 w rows (16 accumulators of 32 zmm).
#include "backend/cpu/fast/avx512/vec_avx512.h"
#include "backend/cpu/fast/kernels.h"
#include "backend/cpu/fast/matmul_tiles.h"

namespace cairn::ops::fast {

void matmul_cols_avx512(const MatmulArgs& a, int64_t j_begin, int64_t j_end, float* scratch) {
  matmul_cols_any<VecAvx512>(a, j_begin, j_end, scratch);
}

}  // namespace cairn::ops::fast
