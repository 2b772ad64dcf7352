// Embedding lookup: block i copies table row ids[i] into y row i, converting
// to f32 exactly (float_load.cuh). Ids were range-checked on the host
// (op_checks.cpp) before they were uploaded.
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/embedding.h"
#include "backend/cuda/float_load.cuh"
#include "backend/cuda/launch.h"
#include "backend/cuda/op_errors.h"
#include "backend/cuda/pdl.cuh"

namespace cairn::cuda {
namespace {

// table [vocab, d] of kDType; ids [n] (device); y [n, d] f32.
template <DType kDType>
__global__ void embedding_kernel(const void* table, const int32_t* ids, float* y, int64_t d) {
  pdl_enter();
  const int64_t src = static_cast<int64_t>(ids[blockIdx.x]) * d;
  float* yr = y + blockIdx.x * d;
  for (int64_t c = threadIdx.x; c < d; c += blockDim.x) yr[c] = load_f32<kDType>(table, src + c);
}

}  // namespace

void embedding(const Tensor& table, std::span<const int32_t> ids, Tensor& y) {
  const int64_t d = table.dim(1), n = static_cast<int64_t>(ids.size());
  if (n == 0 || d == 0) return;
  if (n > 0x7fffffff) invalid_argument("embedding", "more than 2^31 - 1 ids");
  const int32_t* dev_ids = upload(ids);
  const unsigned grid = static_cast<unsigned>(n);
  switch (table.dtype()) {
    case DType::kF32:
      launch_kernel("embedding_kernel", embedding_kernel<DType::kF32>, grid, kBlock, 0, table.raw(),
                    dev_ids, y.data<float>(), d);
      break;
    case DType::kBF16:
      launch_kernel("embedding_kernel", embedding_kernel<DType::kBF16>, grid, kBlock, 0,
                    table.raw(), dev_ids, y.data<float>(), d);
      break;
    case DType::kF16:
      launch_kernel("embedding_kernel", embedding_kernel<DType::kF16>, grid, kBlock, 0, table.raw(),
                    dev_ids, y.data<float>(), d);
      break;
    default:
      invalid_argument("embedding", "table " + table.describe() + " must be f32, bf16 or f16");
  }
}

}  // namespace cairn::cuda
