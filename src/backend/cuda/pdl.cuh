// Programmatic dependent launch, the kernel's side (launch.h is the host's). A kernel launched
// through launch_kernel may start while the kernel ahead of it on the stream still runs; it
// must call pdl_wait() before it touches memory another kernel of the stream reads or writes
// (weights, written once at load, may be read before it), and every block must reach it
// before it returns, so that the grid ends only after the grid ahead of it has. pdl_trigger()
// then lets the kernel behind this one start its blocks. Both are no-ops in a kernel launched
// without the attribute, and below sm_90.
#pragma once

namespace cairn::cuda {

// Waits until the grids this one depends on have completed and their writes are visible.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Lets the dependent grid launch once every block of this one has called it (or ended).
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Both, first thing in a kernel that has nothing to fetch before its inputs are ready.
__device__ __forceinline__ void pdl_enter() {
  pdl_wait();
  pdl_trigger();
}

}  // namespace cairn::cuda
