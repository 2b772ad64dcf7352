// Argument checks shared by every backend: the free functions of ops.h call
// these before dispatching, so table entries may assume well-formed arguments.
// Each throws Error(kInvalidArgument) naming the op and the parameter at fault.
#pragma once

#include <span>

#include "backend/ops.h"

namespace cairn::ops {

void check_matmul(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y);
void check_embedding(const Tensor& table, std::span<const int32_t> ids, const Tensor& y);
void check_norm(const char* op, const Tensor& x, const Tensor& w, const Tensor* b, const Tensor& y);
void check_rope(const Tensor& x, std::span<const int32_t> positions, const RopeParams& p);
void check_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                     std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
                     const Tensor& out);
void check_attention_seqs(const Tensor& q, std::span<const AttentionSeq> seqs,
                          std::span<const int32_t> q_positions, const Tensor& out);
// Same shape, f32, contiguous, one device: the elementwise and row-wise ops.
void check_same_f32(const char* op, const Tensor& a, const Tensor& b);
void check_f32(const char* op, const Tensor& x);
void check_convert(const Tensor& src, const Tensor& dst);
void check_convert_rows(std::span<const RowCopy> copies);

}  // namespace cairn::ops
