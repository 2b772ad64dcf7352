// split_columns on the GPU: every part in one launch. Thread i moves element (or, when every
// width and address allows, float4) i of x [n, Σ widths] to its part; a part is found by a
// scan of at most kMaxParts column offsets passed by value. More parts than that: one strided
// device copy per part.
#include <cstdint>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/split_columns.h"

namespace cairn::cuda {
namespace {

constexpr int kMaxParts = 8;

// Widths and offsets in units of V (float or float4).
struct Parts {
  void* dst[kMaxParts];
  int64_t width[kMaxParts];
  int64_t first[kMaxParts];  // the part's first column of x
  int count;
  int64_t row;  // x's width
};

template <typename V>
__global__ void split_kernel(const V* __restrict__ x, Parts parts, int64_t total) {
  pdl_enter();
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / parts.row, c = i % parts.row;
    int p = 0;
    while (p + 1 < parts.count && c >= parts.first[p + 1]) ++p;
    static_cast<V*>(parts.dst[p])[r * parts.width[p] + (c - parts.first[p])] = x[i];
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// One cudaMemcpy2DAsync per part.
void split_by_copies(const Tensor& x, std::span<Tensor* const> parts) {
  const size_t n = static_cast<size_t>(x.dim(0)), pitch = static_cast<size_t>(x.dim(1)) * 4;
  size_t at = 0;  // bytes into a row of x
  for (Tensor* p : parts) {
    const size_t w = static_cast<size_t>(p->dim(1)) * 4;
    if (w > 0)
      CAIRN_CUDA_CHECK(cudaMemcpy2DAsync(p->raw(), w, static_cast<const uint8_t*>(x.raw()) + at,
                                         pitch, w, n, cudaMemcpyDeviceToDevice, stream()));
    at += w;
  }
}

}  // namespace

void split_columns(const Tensor& x, std::span<Tensor* const> parts) {
  const int64_t n = x.dim(0);
  if (n == 0 || x.dim(1) == 0) return;
  if (parts.size() > static_cast<size_t>(kMaxParts)) return split_by_copies(x, parts);
  bool vec = x.dim(1) % 4 == 0 && aligned16(x.raw());
  for (const Tensor* p : parts) vec = vec && p->dim(1) % 4 == 0 && aligned16(p->raw());
  const int64_t unit = vec ? 4 : 1;
  Parts s{};
  s.count = static_cast<int>(parts.size());
  s.row = x.dim(1) / unit;
  int64_t at = 0;
  for (int i = 0; i < s.count; ++i) {
    s.dst[i] = parts[static_cast<size_t>(i)]->raw();
    s.width[i] = parts[static_cast<size_t>(i)]->dim(1) / unit;
    s.first[i] = at;
    at += s.width[i];
  }
  const int64_t total = n * s.row;
  const unsigned grid = blocks_for(total) > 65535u * 8 ? 65535u * 8 : blocks_for(total);
  if (vec)
    launch_kernel("split_kernel", split_kernel<float4>, grid, kBlock, 0,
                  static_cast<const float4*>(x.raw()), s, total);
  else
    launch_kernel("split_kernel", split_kernel<float>, grid, kBlock, 0, x.data<float>(), s, total);
}

}  // namespace cairn::cuda
