// Row kernels (row_kernels.h) compiled for this ISA.
#include "backend/cpu/fast/avx512/vec_avx512.h"
#include "backend/cpu/fast/kernels.h"
#include "backend/cpu/fast/row_kernels.h"

namespace cairn::ops::fast {

const RowKernels& row_kernels_avx512() {
  static const RowKernels k = make_row_kernels<VecAvx512>();
  return k;
}

}  // namespace cairn::ops::fast
