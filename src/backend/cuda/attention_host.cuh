// Host-side pieces the CUDA attention's launchers share (attention.cu,
// attention_seqs.cu): shared-memory sizes, the GPU's SM count, and the split
// path's workspace.
#pragma once

#include <cstddef>
#include <mutex>

#include "backend/cuda/attention_blocks.cuh"
#include "backend/cuda/cuda_runtime.h"

namespace cairn::cuda::attn {

constexpr size_t kMaxWorkspace = size_t{256} << 20;

inline size_t smem_bytes(int rows_per_warp, int stride) {
  return static_cast<size_t>(kWarps * rows_per_warp + 2 * kKeyBlock) * stride * sizeof(float);
}

// Row stride in shared memory: head_dim rounded up to 4, then to an odd number
// of 16-byte groups so that lanes 0-7 reading float4s of rows 0-7 hit 32 banks.
inline int smem_stride(int head_dim) {
  const int hd4 = (head_dim + 3) & ~3;
  return (hd4 / 4) % 2 == 0 ? hd4 + 4 : hd4;
}

// The split path's partials: one buffer, grown on the stream, reused by every
// call (calls are ordered on the one stream; the mutex orders the host side).
struct Workspace {
  std::mutex mutex;
  void* data = nullptr;
  size_t bytes = 0;

  void* reserve(size_t need) {
    if (need > bytes) {
      if (data) CAIRN_CUDA_CHECK(cudaFreeAsync(data, stream()));
      CAIRN_CUDA_CHECK(cudaMallocAsync(&data, need, stream()));
      bytes = need;
    }
    return data;
  }
};

inline Workspace& workspace() {
  static Workspace* w = new Workspace();  // lives until exit: kernels may still use it
  return *w;
}

}  // namespace cairn::cuda::attn
