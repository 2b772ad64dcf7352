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
#define CAIRN_WGMMA_RS_N64(T, TYPE)                                                               \
  template <>                                                                                     \
  __device__ __forceinline__ void wgmma_k16_rs<T, 64>(float(&d)[32], const uint32_t(&a)[4],       \
                                                      uint64_t b) {                               \
    asm volatile(                                                                                 \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                              \
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE                               \
        " {"                                                                                      \
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                  \
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"          \
        "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"                                          \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),     \
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), \
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),           \
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),           \
          "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])            \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));                            \
  }
CAIRN_WGMMA_RS_N64(__nv_bfloat16, "bf16")
CAIRN_WGMMA_RS_N64(__half, "f16")
#undef CAIRN_WGMMA_RS_N64
#define CAIRN_WGMMA_RS_N128(T, TYPE)                                                              \
  template <>                                                                                     \
  __device__ __forceinline__ void wgmma_k16_rs<T, 128>(float(&d)[64], const uint32_t(&a)[4],      \
                                                       uint64_t b) {                              \
    asm volatile(                                                                                 \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                              \
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE                              \
        " {"                                                                                      \
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                  \
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "        \
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "        \
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"          \
        "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"                                          \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),     \
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), \
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),           \
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),           \
          "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),           \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]),           \
          "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),           \
          "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),           \
          "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),           \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]),           \
          "+f"(d[62]), "+f"(d[63])                                                                \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));                            \
  }
CAIRN_WGMMA_RS_N128(__nv_bfloat16, "bf16")
CAIRN_WGMMA_RS_N128(__half, "f16")
#undef CAIRN_WGMMA_RS_N128
#else
{
  __trap();
}
#endif

}  // namespace cairn::cuda::wg
