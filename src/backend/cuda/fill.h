// fill_uniform on the device (device.h): the same values as the CPU backend's.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace cairn::cuda {

// t: contiguous f32/bf16/f16 on the CUDA device.
void fill_uniform(Tensor& t, uint64_t seed, float lo, float hi);

}  // namespace cairn::cuda
