// The warpgroup product with A in registers (wgmma, sm_90a only): d += a · b for one k16 step,
// a the warp's m16k16 fragment of the warpgroup's 64 rows in mma.sync m16n8k16's A layout (four
// registers: rows g and g + 8, k 2(l % 4) .. and k 8 + 2(l % 4) ..), b a shared-memory tile
// read N-major (imm-trans-b 1: its K rows hold N contiguous elements), d the m64nN accumulators
// (wgmma.cuh's layout). The fences and waits are wgmma.cuh's.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backend/cuda/wgmma.cuh"

namespace cairn::cuda::wg {

// Descriptor of an N-major, 128-byte-swizzled tile at shared address `addr` (1,024-byte
// aligned): 8 K rows of 64 N elements (128 bytes each) form a 1,024-byte atom; atoms along K
// 1,024 bytes apart (the stride offset), along N `n_stride` bytes apart (the leading offset).
__device__ __forceinline__ uint64_t n_major_descriptor(uint32_t addr, uint32_t n_stride) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) |
         (static_cast<uint64_t>((n_stride & 0x3FFFF) >> 4) << 16) | (uint64_t{1024 >> 4} << 32) |
         (uint64_t{1} << 62);
}

template <typename T, int N>
__device__ void wgmma_k16_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b)
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    ;
// R = N / 2 accumulators, a from %R .. %R+3, b from %R+4, the scale-d predicate from %R+5;
// the operand lists are wgmma.cuh's.
#define CAIRN_WGMMA_RS(T, TYPE, N, R, A0, A1, A2, A3, B, P)                                \
  template <>                                                                              \
  __device__ __forceinline__ void wgmma_k16_rs<T, N>(float(&d)[R], const uint32_t(&a)[4],  \
                                                     uint64_t b) {                         \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #P                                   \
                 ", 0;\n"                                                                  \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE           \
                 " {" CAIRN_WGMMA_D##R "}, {%" #A0 ", %" #A1 ", %" #A2 ", %" #A3 "}, %" #B \
                                       ", p, 1, 1, 1;\n}\n"                                \
                 : CAIRN_WGMMA_OUT##R                                                      \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));            \
  }
CAIRN_WGMMA_RS(__nv_bfloat16, "bf16", 64, 32, 32, 33, 34, 35, 36, 37)
CAIRN_WGMMA_RS(__half, "f16", 64, 32, 32, 33, 34, 35, 36, 37)
CAIRN_WGMMA_RS(__nv_bfloat16, "bf16", 128, 64, 64, 65, 66, 67, 68, 69)
CAIRN_WGMMA_RS(__half, "f16", 128, 64, 64, 65, 66, 67, 68, 69)
#undef CAIRN_WGMMA_RS
#else
{
  __trap();
}
#endif

}  // namespace cairn::cuda::wg
