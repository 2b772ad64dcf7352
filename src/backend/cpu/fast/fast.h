// The CPU fast paths: multi-threaded over ThreadPool::global(), vectorized
// with AVX2+FMA+F16C or AVX-512 kernels picked by cpu::active_isa(). Each
// function has the signature of its op in ops.h and assumes checked arguments.
#pragma once

#include <span>

#include "backend/cpu/fast/kernels.h"
#include "backend/op_table.h"

namespace cairn::ops::fast {

// Overwrites the entries of `t` that have a fast path.
void fill_table(OpTable& t);

void matmul(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y);

// Runs fn over column ranges of y on the global pool (tests call it with a
// specific kernel to compare ISAs).
void run_matmul_cols(const MatmulArgs& a, void (*fn)(const MatmulArgs&, int64_t, int64_t, float*));

}  // namespace cairn::ops::fast
