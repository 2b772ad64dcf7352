// Dtype conversion, one thread per element: f32/bf16/f16 in any direction
// through f32, with float_load.cuh's conversions (those of core/dtype.h), so
// the device writes the bytes the CPU backend would, NaNs included.
#include "backend/cuda/convert.h"
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/float_load.cuh"

namespace cairn::cuda {
namespace {

// src, dst: n contiguous elements of kSrc and kDst (both f32, bf16 or f16: op_checks.cpp).
template <DType kSrc, DType kDst>
__global__ void convert_kernel(const void* src, void* dst, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    store_f32<kDst>(dst, i, load_f32<kSrc>(src, i));
}

template <DType kSrc>
void launch_from(const void* src, DType dst_dtype, void* dst, int64_t n) {
  const unsigned grid = blocks_for(n) < 4096u ? blocks_for(n) : 4096u;
  if (dst_dtype == DType::kF32)
    convert_kernel<kSrc, DType::kF32><<<grid, kBlock, 0, stream()>>>(src, dst, n);
  else if (dst_dtype == DType::kBF16)
    convert_kernel<kSrc, DType::kBF16><<<grid, kBlock, 0, stream()>>>(src, dst, n);
  else
    convert_kernel<kSrc, DType::kF16><<<grid, kBlock, 0, stream()>>>(src, dst, n);
}

}  // namespace

void convert(const Tensor& src, Tensor& dst) {
  const int64_t n = src.numel();
  if (n == 0) return;
  if (src.dtype() == DType::kF32)
    launch_from<DType::kF32>(src.raw(), dst.dtype(), dst.raw(), n);
  else if (src.dtype() == DType::kBF16)
    launch_from<DType::kBF16>(src.raw(), dst.dtype(), dst.raw(), n);
  else
    launch_from<DType::kF16>(src.raw(), dst.dtype(), dst.raw(), n);
  check_launch("convert_kernel");
}

}  // namespace cairn::cuda
