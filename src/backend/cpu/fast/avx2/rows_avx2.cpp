// Row kernels (row_kernels.h) compiled for this ISA.
#include "backend/cpu/fast/avx2/vec_avx2.h"
#include "backend/cpu/fast/kernels.h"
#include "backend/cpu/fast/row_kernels.h"

namespace cairn::ops::fast {

const RowKernels& row_kernels_avx2() {
  static const RowKernels k = make_row_kernels<VecAvx2>();
  return k;
}

}  // namespace cairn::ops::fast
