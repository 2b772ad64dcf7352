// split_rope (rope.h) of a long run of tokens through an angle table: every token's cos/sin
// pairs computed once, by a kernel of their own, into device memory that the split then reads
// (rope.cu's kernels compute a token's pairs in each of the token's blocks); the split moves four
// elements a thread (float4), or with head norms a warp a head row, four elements a lane. The same
// bits as rope.cu's kernels (rope_math.cuh; the head norms' order is rms_norm_kernel's).
#pragma once

#include <span>

#include "backend/ops.h"

namespace cairn::cuda {

// Tokens from which split_rope takes the angle table: below, the table's launch costs more than the
// angles it saves (and decode steps, captured into graphs, keep one kernel).
constexpr int64_t kAngleTableMinTokens = 256;

// split_rope (with `norms`, or none) through the angle table; false, launching nothing, where it
// does not apply: fewer than kAngleTableMinTokens tokens, a stream being captured into a graph
// (the angle table is allocated a call), head_dim or the rotary half not in whole float4s
// (head_dim % 4, and half % 4 for half-split pairs, half % 2 for interleaved ones), an operand
// not 16-byte aligned, or with head norms a head_dim past 1,024.
bool split_rope_by_angles(const Tensor& qkv, std::span<const int32_t> positions,
                          const ops::RopeParams& p, Tensor& q, Tensor& k, Tensor& v,
                          const ops::HeadNorms& norms);

}  // namespace cairn::cuda
