// The CPU fast paths: multi-threaded over ThreadPool::global(), vectorized
// with AVX2+FMA+F16C or AVX-512 kernels picked by cpu::active_isa(). Each
// function has the signature of its op in ops.h and assumes checked arguments.
#pragma once

#include <span>

#include "backend/op_table.h"

namespace cairn::ops::fast {

// Overwrites the entries of `t` that have a fast path.
void fill_table(OpTable& t);

}  // namespace cairn::ops::fast
