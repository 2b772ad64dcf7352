// What every CUDA op shares: error checks that turn a failed runtime call or
// launch into a cairn::Error, the stream ops launch on, and small uploads of
// host-side arguments (token ids, positions, rope frequencies) into device
// memory ordered on that stream.
//
// Contract for op entries (src/backend/cuda/*.cu): they launch on stream() and
// return without synchronizing; their tensors are on the CUDA device, except
// spans, which are host memory and reach the kernel through upload().
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace cairn::cuda {

// Throws Error(kInternal) naming `what` and CUDA's message unless e == cudaSuccess
// (kOutOfMemory for cudaErrorMemoryAllocation).
void check(cudaError_t e, const char* what);
// After a launch: checks cudaGetLastError().
void check_launch(const char* kernel);

#define CAIRN_CUDA_CHECK(call) ::cairn::cuda::check((call), #call)

// True when the CUDA runtime sees at least one device (false, never a throw,
// on a machine without a GPU or driver).
bool device_present();

// The stream ops launch on: the calling thread's context's (rank_context.h; non-blocking,
// one per process unless a thread binds a context of its own).
cudaStream_t stream();
// Whether stream() is being captured into a graph now (graph_store.h's capture or another).
bool stream_capturing();
// The stream of copies issued off the ops' thread (kCopyStream; the context's, non-blocking):
// ordered with nothing on stream(), its callers wait for it.
cudaStream_t copy_stream();

// Copies `bytes` host bytes into device memory valid until the stream reaches
// work issued after the next ~1 MiB of uploads (a ring in device memory, staged
// through pinned host memory). For kernel arguments only, never for tensors.
const void* upload(const void* host, size_t bytes);

template <typename T>
const T* upload(std::span<const T> s) {
  return static_cast<const T*>(upload(s.data(), s.size_bytes()));
}

// The device's streaming multiprocessors (asked once per process).
int sm_count();

// Lets `kernel` take `bytes` of dynamic shared memory (past the default 48 KiB) on the current
// device, on every device a thread has bound a context to (rank_context.h), and on each one
// bound later: callers may set it once per process.
void allow_smem_everywhere(const void* kernel, int bytes);
template <typename Kernel>
void allow_smem(Kernel kernel, size_t bytes) {
  allow_smem_everywhere(reinterpret_cast<const void*>(kernel), static_cast<int>(bytes));
}

// Threads per block and blocks for n independent elements.
constexpr int kBlock = 256;
inline unsigned blocks_for(int64_t n, int block = kBlock) {
  return static_cast<unsigned>((n + block - 1) / block);
}

}  // namespace cairn::cuda
