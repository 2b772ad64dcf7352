// y[i, j] += bias[j] for the GEMMs whose bias cannot ride in cuBLASLt's epilogue (a bias not
// 16-byte aligned). One f32 addition per element, as the epilogue does: the same bits.
#pragma once

#include <cstdint>

namespace cairn::cuda {

// y [n, m] f32 and bias [m] f32 on the device; launches on stream().
void add_bias_rows(float* y, const float* bias, int64_t n, int64_t m);

}  // namespace cairn::cuda
