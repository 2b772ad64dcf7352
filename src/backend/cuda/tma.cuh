// PTX wrappers for Hopper's tensor memory accelerator (sm_90): shared-memory transaction
// barriers (mbarrier) and the 2D tiled bulk copy global → shared that completes on one.
//
// A stage's barrier counts one arrival (the thread that issues the copies, announcing the
// bytes to come) plus the copies' bytes; its phase completes when both are in. The j-th
// use of a barrier completes phase j, which try_wait finds by its parity j % 2.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace cairn::cuda::tma {

__device__ __forceinline__ void barrier_init(uint32_t bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}
// Makes barrier_init's writes visible to the copies (the async proxy) and other threads.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// Arrives once on `bar` and adds `bytes` the phase waits for.
__device__ __forceinline__ void arrive_expect(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
// One arrival on `bar`, none where `on` is false: predicated, not branched, so that no
// divergent path lies between a warpgroup's wgmma groups (ptxas would serialise them).
__device__ __forceinline__ void arrive(uint32_t bar, bool on) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %1, 0;\n@p mbarrier.arrive.shared::cta.b64 _, [%0];\n}\n" ::
          "r"(bar),
      "r"(static_cast<int>(on))
      : "memory");
}
__device__ __forceinline__ bool try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
// Until the phase of parity `parity` of `bar` has completed.
__device__ __forceinline__ void wait(uint32_t bar, uint32_t parity) {
  while (!try_wait(bar, parity)) {
  }
}

// The box of `map` at (element c0 of a row, row c1) into shared address `dst`, completing on
// `bar`. Parts of the box outside the matrix arrive as zeros (and count as bytes).
__device__ __forceinline__ void load_2d(uint32_t dst, const CUtensorMap* map, int c0, int c1,
                                        uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

}  // namespace cairn::cuda::tma
