// PTX wrappers for Hopper's warpgroup tensor-core product (wgmma, sm_90a only): shared-memory
// matrix descriptors, the fences around an asynchronous group, and the m64nNk16 product for
// N = 32, 64, 128 with f32 accumulators.
//
// A warpgroup (4 warps, 128 threads) multiplies A (64 × 16, from shared memory) by B (16 × N,
// from shared memory) into D (64 × N, f32, N / 2 registers a thread). D's layout, thread t of
// the warpgroup (warp w = t / 32, lane l = t % 32), register 4j + e: row 16w + l / 4 + 8(e / 2),
// column 8j + 2(l % 4) + e % 2 — an m16n8 accumulator per warp and n8 step.
//
// Both operands are K-major tiles of 64 half-precision values a row (128 bytes) in the 128-byte
// swizzle: chunk c of row r at chunk position c ^ (r % 8), 8-row groups 1,024 bytes apart, the
// tile 1,024-byte aligned — mma_tile.cuh's swizzled<128> layout. k16 step s of a tile starts 32s
// bytes in (the hardware applies the swizzle to the address it forms).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace cairn::cuda::wg {

// Descriptor of a K-major, 128-byte-swizzled tile at shared address `addr` (1,024-byte aligned,
// or 32s bytes past that for k16 step s): start address / 16, leading offset 16 bytes (unused
// by this layout), stride 1,024 bytes between 8-row groups, swizzle mode 1 (128 bytes).
__device__ __forceinline__ uint64_t tile_descriptor(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (uint64_t{16 >> 4} << 16) |
         (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 62);
}

// The descriptor of the tile `bytes` (a multiple of 16) past the one d describes: its start
// address field (bits 0-13: address / 16) advanced. Shared addresses stay below 256 KiB, so the
// field never carries into the next; one add where a descriptor made anew costs several.
__device__ __forceinline__ uint64_t advance(uint64_t d, uint32_t bytes) {
  return d + (bytes >> 4);
}

// Makes this thread's earlier generic-proxy writes to shared memory (cp.async included)
// visible to the async proxy, through which wgmma reads its operands.
__device__ __forceinline__ void fence_proxy_async() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
// Before the first wgmma of a group: orders earlier register and shared-memory accesses.
__device__ __forceinline__ void fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
// Waits until at most N committed wgmma groups are pending.
template <int N>
__device__ __forceinline__ void wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
// Keeps the compiler from moving accesses to d across the asynchronous group's bounds.
template <int R>
__device__ __forceinline__ void pin(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d += a · b for one k16 step: a, b descriptors (tile_descriptor), d N / 2 f32 registers.
// Asynchronous: d is defined only after commit() and wait(). Compiled for sm_90a only; the
// portable PTX build traps (wgmma_gemm_available() keeps other devices off these kernels).
template <typename T, int N>
__device__ void wgmma_k16(float (&d)[N / 2], uint64_t a, uint64_t b)
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    ;
// Written out per N (one macro, for both dtypes): inline PTX needs its operand list as a
// literal. CAIRN_WGMMA_D<R>: the placeholders of d's R registers; CAIRN_WGMMA_OUT<R>: their
// constraints (also wgmma_rs.cuh's).
// clang-format off
#define CAIRN_WGMMA_D16 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define CAIRN_WGMMA_D32 CAIRN_WGMMA_D16 \
    ", %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define CAIRN_WGMMA_D64 CAIRN_WGMMA_D32 \
    ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47" \
    ", %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
// clang-format on
#define CAIRN_WGMMA_OUT16                                                                         \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),    \
      "+f"(d[15])
#define CAIRN_WGMMA_OUT32                                                                          \
  CAIRN_WGMMA_OUT16, "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),   \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define CAIRN_WGMMA_OUT64                                                                          \
  CAIRN_WGMMA_OUT32, "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), \
      "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]),   \
      "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]),   \
      "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]),   \
      "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
// m64nNk16 with both operands from shared memory: R = N / 2 accumulators, operands %R (a) and
// %R+1 (b), the scale-d predicate from %R+2.
#define CAIRN_WGMMA_SS(T, TYPE, N, R, A, B, P)                                            \
  template <>                                                                             \
  __device__ __forceinline__ void wgmma_k16<T, N>(float(&d)[R], uint64_t a, uint64_t b) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #P                                  \
                 ", 0;\n"                                                                 \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE          \
                 " {" CAIRN_WGMMA_D##R "}, %" #A ", %" #B ", p, 1, 1, 0, 0;\n}\n"         \
                 : CAIRN_WGMMA_OUT##R                                                     \
                 : "l"(a), "l"(b), "r"(1));                                               \
  }
CAIRN_WGMMA_SS(__nv_bfloat16, "bf16", 32, 16, 16, 17, 18)
CAIRN_WGMMA_SS(__half, "f16", 32, 16, 16, 17, 18)
CAIRN_WGMMA_SS(__nv_bfloat16, "bf16", 64, 32, 32, 33, 34)
CAIRN_WGMMA_SS(__half, "f16", 64, 32, 32, 33, 34)
CAIRN_WGMMA_SS(__nv_bfloat16, "bf16", 128, 64, 64, 65, 66)
CAIRN_WGMMA_SS(__half, "f16", 128, 64, 64, 65, 66)
#undef CAIRN_WGMMA_SS
#else
{
  __trap();
}
#endif

}  // namespace cairn::cuda::wg
