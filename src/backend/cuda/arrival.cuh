// The last-arrival count a grid's blocks share when the last of a group to finish its part
// does the group's remaining work instead of a kernel of its own (the split attention's
// last-block combine, attention_combine.cuh).
#pragma once

namespace cairn::cuda {

// Counts this block in at `count` (every thread calls it once its outputs are stored); true in
// the block that makes it `expected`, which sets it back to 0 for the next launch. The barrier
// orders the block's stores before thread 0's release (CUTLASS's semaphore pattern: one
// thread's gpu-scope release after bar.sync, no fence in every thread), and thread 0's acquire
// before the last block's reads of the others' stores (which should go through L2: __ldcg).
__device__ __forceinline__ bool arrive_last(unsigned* count, unsigned expected) {
  __syncthreads();
  int last = 0;
  if (threadIdx.x == 0) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;\n"
                 : "=r"(old)
                 : "l"(count)
                 : "memory");
    last = old + 1 == expected;
    if (last) *count = 0;  // every arrival of this launch is in
  }
  return __syncthreads_or(last) != 0;
}

}  // namespace cairn::cuda
