#include "backend/cpu/reference/reference.h"
#include "core/error.h"

namespace cairn::ops::ref {

float load_as_f32(const void* data, DType dtype, int64_t i) {
  switch (dtype) {
    case DType::kF32:
      return static_cast<const float*>(data)[i];
    case DType::kBF16:
      return bf16_to_f32(static_cast<const uint16_t*>(data)[i]);
    case DType::kF16:
      return f16_to_f32(static_cast<const uint16_t*>(data)[i]);
    default:
      break;
  }
  fail(ErrorCode::kInternal, "load_as_f32 of {}", dtype_name(dtype));
}

void store_from_f32(void* data, DType dtype, int64_t i, float v) {
  switch (dtype) {
    case DType::kF32:
      static_cast<float*>(data)[i] = v;
      return;
    case DType::kBF16:
      static_cast<uint16_t*>(data)[i] = f32_to_bf16(v);
      return;
    case DType::kF16:
      static_cast<uint16_t*>(data)[i] = f32_to_f16(v);
      return;
    default:
      break;
  }
  fail(ErrorCode::kInternal, "store_from_f32 into {}", dtype_name(dtype));
}

void convert(const Tensor& src, Tensor& dst) {
  const int64_t n = src.numel();
  for (int64_t i = 0; i < n; ++i)
    store_from_f32(dst.raw(), dst.dtype(), i, load_as_f32(src.raw(), src.dtype(), i));
}

}  // namespace cairn::ops::ref
