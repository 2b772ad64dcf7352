// PTX wrappers for the tensor-core kernels (mma_gemm.cu, the attention's tensor-core path):
// asynchronous global → shared copies, ldmatrix and the m16n8k16 tensor-core product, plus
// the swizzled shared-memory layout of a k-tile.
//
// Layout: a k-tile holds rows of K half-precision elements (K a multiple of 64: 2K bytes, K / 8
// 16-byte chunks). Chunk c of row r lives at chunk position c ^ (r % 8), so the eight row
// addresses one ldmatrix phase reads fall in eight different bank groups.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace cairn::cuda::mma {

__device__ inline uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Byte offset of chunk `c` of row `r` in a tile of RowBytes-byte rows.
template <int RowBytes>
__device__ inline uint32_t swizzled(int r, int c) {
  return static_cast<uint32_t>(r * RowBytes + ((c ^ (r & 7)) * 16));
}

// 16 bytes global → shared, asynchronously (bypassing L1).
__device__ inline void copy16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
// 16 zero bytes to shared memory.
__device__ inline void zero16(uint32_t dst) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(dst), "r"(0) : "memory");
}
__device__ inline void commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
// Waits until at most N committed groups are still in flight.
template <int N>
__device__ inline void wait_pending() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ inline void ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2,
                                   uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
__device__ inline void ldmatrix_x2(uint32_t addr, uint32_t& r0, uint32_t& r1) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r0), "=r"(r1)
               : "r"(addr));
}

// The same with each 8×8 matrix transposed: lane t gets elements (2(t % 4), t / 4) and
// (2(t % 4) + 1, t / 4) of each, so rows of the stored matrix become columns of the fragment
// (a row-major [k][n] tile read as the "col" B operand of mma_k16).
__device__ inline void ldmatrix_x4_trans(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2,
                                         uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// d += a (16×16, row) · b (16×8, col), f32 accumulators; one k16 step.
template <typename T>
__device__ inline void mma_k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);

// mma_k16 for an A tile whose rows 8-15 are zeros (a decode block's few rows): a = {a[0], a[2]}
// of mma_k16's fragment. d is a whole C fragment whose rows g + 8 (d[2], d[3]) are scratch the
// caller never reads: an mma output (i, j) reads only row i of a and of d, so row g's bits are
// mma_k16's whatever rows g + 8 hold, and keeping them in place spares a zeroing and moves
// around every step (two C registers a step would have to be zeros next to row g's).
template <typename T>
__device__ inline void mma_k16_top(float (&d)[4], const uint32_t (&a)[2], const uint32_t (&b)[2]);

// Both for element type T, whose PTX name is TYPE: the instruction string must be a literal.
#define CAIRN_MMA_K16_FORMS(T, TYPE)                                                              \
  template <>                                                                                     \
  __device__ inline void mma_k16<T>(float(&d)[4], const uint32_t(&a)[4], const uint32_t(&b)[2]) { \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE                           \
                 ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"         \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                 \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));             \
  }                                                                                               \
  template <>                                                                                     \
  __device__ inline void mma_k16_top<T>(float(&d)[4], const uint32_t(&a)[2],                      \
                                        const uint32_t(&b)[2]) {                                  \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE                           \
                 ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %5}, {%7, %8}, {%0, %1, %2, %3};\n"         \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                 \
                 : "r"(a[0]), "r"(0u), "r"(a[1]), "r"(b[0]), "r"(b[1]));                          \
  }

CAIRN_MMA_K16_FORMS(__nv_bfloat16, "bf16")
CAIRN_MMA_K16_FORMS(__half, "f16")
#undef CAIRN_MMA_K16_FORMS

// For a tile config C (kThreads copying, kTileK values a row of kRowBytes, kChunksPerRow
// 16-byte chunks): `Rows` rows of k-tile kt of `src` (row pitch k) from row `row0`, into a swizzled
// tile at shared address `dst`. Rows at or past `limit` are not copied: whatever their slots hold
// only reaches outputs of those rows (an output (i, j) reads row i of x and row j of w alone),
// which are never stored. Columns past k are not copied either: k is a multiple of 16, and
// the product skips the k16 steps past k.
template <class C, int Rows, typename T>
__device__ inline void copy_rows(uint32_t dst, const T* src, int row0, int limit, int k, int kt) {
  constexpr int kChunks = Rows * C::kChunksPerRow;
#pragma unroll
  for (int j = 0; j < (kChunks + C::kThreads - 1) / C::kThreads; ++j) {
    const int i = static_cast<int>(threadIdx.x) + j * C::kThreads;
    if (kChunks % C::kThreads != 0 && i >= kChunks) break;
    const int r = i / C::kChunksPerRow, c = i % C::kChunksPerRow;
    const int row = row0 + r, col = kt * C::kTileK + c * 8;
    if (row < limit && col < k)
      copy16(dst + swizzled<C::kRowBytes>(r, c), src + static_cast<int64_t>(row) * k + col);
  }
}

}  // namespace cairn::cuda::mma
