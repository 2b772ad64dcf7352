// split_rope (rope.h) of a long run of tokens: every token's cos/sin table computed once, by a
// kernel of its own, into a device table that the split then reads (rope.cu's kernels compute a
// token's table in each of the token's blocks); the split moves four elements a thread (float4).
// The same bits as rope.cu's kernels (rope_math.cuh).
#pragma once

#include <span>

#include "backend/ops.h"

namespace cairn::cuda {

// Tokens from which split_rope takes the table: below, the table's launch costs more than the
// angles it saves (and decode steps, captured into graphs, keep one kernel).
constexpr int64_t kRopeTableMinTokens = 256;

// split_rope without head norms through the table; false, launching nothing, where it does not
// apply: fewer than kRopeTableMinTokens tokens, a stream being captured into a graph (the table
// is allocated a call), head_dim or the rotary half not in whole float4s (head_dim % 4, and
// half % 4 for half-split pairs, half % 2 for interleaved ones), or an operand not 16-byte
// aligned.
bool split_rope_table(const Tensor& qkv, std::span<const int32_t> positions,
                      const ops::RopeParams& p, Tensor& q, Tensor& k, Tensor& v);

}  // namespace cairn::cuda
