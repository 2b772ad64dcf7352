// The two parts of a cut k (gemm_order.h) computed at once and joined at the store
// (wgmma_stream.cu): blockIdx.z is the part, and the two blocks of one tile meet through a
// counter of their own (zero between launches).
//
// The first to finish stores its chain alone; the second waits until those stores are seen,
// adds its chain to them and then the bias: y = (first + second) + bias, or (second + first) +
// bias, the same value (IEEE addition is commutative), so the bits are the two launches' and
// every other tile's. The counter: 0; the first's ticket takes it to 1; the second's to 2; the
// first's "stored" to 3 — in either order of the last two, so the second waits for 3 (it may
// find it at once) and sets 0 again. No block waits for one that has not started: the second
// waits only for a first that has taken its ticket, and so is running.
#pragma once

#include <cstdint>

#include "backend/cuda/mma_thin.h"
#include "backend/cuda/wgmma_tile.cuh"

namespace cairn::cuda::wgt {

// Named barrier 1 over the `threads` consumer threads (the loading warp has left the kernel).
__device__ __forceinline__ void consumers_sync(int threads) {
  asm volatile("bar.sync 1, %0;\n" ::"r"(threads) : "memory");
}

__device__ __forceinline__ int load_acquire(const int* p) {
  int v = 0;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// The block's tile of y from its part's chain `acc` (kThreads consumer threads; `ticket` a
// shared int). counter: this tile's, 0 on entry to the launch, 0 again when both have left.
template <class C, int kThreads>
__device__ void join_tile(const ThinProblem& p, int* counter, int* ticket,
                          const float (&acc)[C::kN / 2]) {
  const int x0 = static_cast<int>(blockIdx.x) * C::kN, w0 = static_cast<int>(blockIdx.y) * C::kBM;
  if (threadIdx.x == 0) *ticket = atomicAdd(counter, 1);
  consumers_sync(kThreads);
  if (*ticket == 0) {  // first: the chain alone, then "stored"
    ThinProblem alone = p;
    alone.bias = nullptr;
    store_tile<C>(alone, x0, w0, acc);
    __threadfence();
    consumers_sync(kThreads);
    if (threadIdx.x == 0) atomicAdd(counter, 1);
    return;
  }
  if (threadIdx.x == 0) {
    while (load_acquire(counter) != 3) __nanosleep(64);
    *counter = 0;  // read again only by the next launch, after this one has ended
  }
  consumers_sync(kThreads);
  __threadfence();
  store_tile<C>(p, x0, w0, acc, true);  // reads the first's stores from L2 (__ldcg)
}

}  // namespace cairn::cuda::wgt
