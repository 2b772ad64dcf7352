// The fixed-order tensor-core GEMM of the batch-invariant mode: y[n, m] = x[n, k] · w[m, k]ᵀ
// (+ bias[m]), x and w bf16 or f16 (the same dtype), y and bias f32.
//
// Every y element is reduced in one order whatever n is and whichever tile shape serves n
// (gemm_order.h): k is cut at h = gemm_cut(m, k) (k itself by default); for each part [0, h) and
// [h, k), acc = 0, then acc = mma_k16(x[i, 16g : 16g + 16], w[j, 16g : 16g + 16], acc) for the
// part's g in increasing order (one m16n8k16 tensor-core step each, f32 accumulation); then
// (first + second) + bias[j] (first + bias[j] for one part). No atomics, and the cut depends on
// w's shape and the process's setting alone. So a row's bits do not depend on the batch, and the
// tile shape can follow n: a few rows stream w through many small tiles near the memory bandwidth,
// many rows use large tiles near the tensor-core rate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace cairn::cuda {

// The first part's length for w [m, k]: k (one part) unless the split is on for depths of at
// least gemm_split_from() and w is narrow, then k_split(k) (gemm_order.h's cut_of). By default the
// split is on from depth 8192 on a GPU whose peak memory bandwidth exceeds 30 GB/s a multiprocessor
// (an H200), off elsewhere (an H100), decided at the first product; CAIRN_GEMM_SPLIT_K_FROM=<depth>
// (0: off) overrides it, set_gemm_split_from at run time, before the products whose bits are
// to be compared (the cut is part of the bits, and captured graphs keep the cut they were
// captured with).
int64_t gemm_cut(int64_t m, int64_t k);
int64_t gemm_split_from();
void set_gemm_split_from(int64_t depth);

// Whether mma_gemm takes weight w [m, k]: bf16 or f16, k a positive multiple of 16, w's start
// 16-byte aligned. A property of the weight alone, so every n of one weight takes one path.
bool mma_gemm_supports(const Tensor& w);

// x: n × k elements of w's dtype on the device, rows contiguous, 16-byte aligned (round_input's
// buffer); bias f32 [m] or null; y f32 [n, m] contiguous. Launches on stream().
void mma_gemm(const void* x, const Tensor& w, const float* bias, Tensor& y);

// The tile shape mma_gemm picks for n rows of x and m rows of w, of depth k where given (a cut
// k may take another tile; for benchmarks and tests).
const char* mma_gemm_tile_name(int64_t n, int64_t m, int64_t k = 0);
// Every tile shape mma_gemm has ("rows of x" x "rows of w").
std::vector<std::string> mma_gemm_tile_names();
// Makes every later mma_gemm use tile `name` (one of mma_gemm_tile_names()), or, for "", the
// tile picked by n and m again. For tests and tuning: every tile gives the same bits.
void force_mma_tile(const std::string& name);

}  // namespace cairn::cuda
