// Kernel launches that may overlap the kernel ahead of them (programmatic dependent launch):
// the next kernel's blocks start, and fetch what does not depend on the kernel ahead (a
// product's weights), while the kernel ahead finishes, instead of after its last block ends
// and the launch that follows. Results are unchanged: the kernel waits (pdl.cuh) before it
// reads or writes anything the stream's other kernels touch.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "backend/cuda/cuda_runtime.h"

namespace cairn::cuda {

// Where launch_kernel lets kernels overlap: kEager (the default: not in launches being captured
// into a graph, where the overlap made decode slower on an H200), kAll or kOff.
// CAIRN_CUDA_PDL=1|2|0 (read once per process); set_programmatic_launch in code, for the tests and
// the benchmark.
enum class Programmatic { kOff = 0, kAll = 1, kEager = 2 };
Programmatic programmatic_launch();
void set_programmatic_launch(Programmatic mode);
// Whether this launch, now, may overlap.
bool overlap_launch();

// Sets the mode for its own life, then puts back the one before (tests, benchmarks).
class ProgrammaticScope {
 public:
  explicit ProgrammaticScope(Programmatic mode) : saved_(programmatic_launch()) {
    set_programmatic_launch(mode);
  }
  ~ProgrammaticScope() { set_programmatic_launch(saved_); }
  ProgrammaticScope(const ProgrammaticScope&) = delete;
  ProgrammaticScope& operator=(const ProgrammaticScope&) = delete;

 private:
  Programmatic saved_;
};

// kernel<<<grid, block, smem, stream()>>>(args...), with the overlap when overlap_launch().
// The kernel must call pdl_wait() (pdl.cuh) in every block before it touches memory that other
// kernels of the stream read or write. `name` names the kernel in a launch error.
template <typename... P, typename... A>
void launch_kernel(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, size_t smem,
                   A&&... args) {
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream();
  config.attrs = attr;
  config.numAttrs = overlap_launch() ? 1 : 0;
  check(cudaLaunchKernelEx(&config, kernel, std::forward<A>(args)...), name);
}

}  // namespace cairn::cuda
