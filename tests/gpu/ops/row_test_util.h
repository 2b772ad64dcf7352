// Helpers of the row-wise GPU op tests (norms, softmax): bitwise comparison of
// host tensors, and one row of a batch copied alone into its own device memory.
#pragma once

#include <cstring>

#include "backend/device.h"
#include "core/tensor.h"

namespace cairn::gpu_test {

inline bool bit_equal(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// Row i of host x [n, d] as a [1, d] device tensor in fresh memory. `shifted`
// starts it 4 bytes past a 16-byte boundary, so a kernel cannot read it as float4.
inline Tensor device_row(const Tensor& x, int64_t i, bool shifted) {
  const int64_t d = x.dim(-1);
  Tensor buf = empty_on({DeviceKind::kCuda, 0}, {d + 1}, DType::kF32);
  Tensor view = Tensor::view_of(buf.storage(), shifted ? 4 : 0, {1, d}, DType::kF32);
  DeviceBackend& b = device_backend(DeviceKind::kCuda);
  b.copy(x.slice_rows(i, i + 1), view);
  b.synchronize();
  return view;
}

}  // namespace cairn::gpu_test
