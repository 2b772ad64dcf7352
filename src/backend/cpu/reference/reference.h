// The CPU reference implementation of every op: plain loops, double-precision
// reductions, one output element at a time. It is the oracle the fast paths
// are tested against and the table used when fast paths are turned off.
// Arguments must already be checked (op_checks.h); signatures mirror ops.h.
#pragma once

#include <span>

#include "backend/ops.h"

namespace cairn::ops::ref {

void matmul(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y);
void embedding(const Tensor& table, std::span<const int32_t> ids, Tensor& y);
void rms_norm(const Tensor& x, const Tensor& w, float eps, Tensor& y);
void layer_norm(const Tensor& x, const Tensor& w, const Tensor* b, float eps, Tensor& y);
void rope(Tensor& x, std::span<const int32_t> positions, const RopeParams& p);
void attention(const Tensor& q, const Tensor& k, const Tensor& v,
               std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
               const AttentionParams& p, Tensor& out);
void gated_activation(const Tensor& gate, const Tensor& up, Activation act, Tensor& out);
void gated_activation_fused(const Tensor& gate_up, Activation act, Tensor& out);
void add(const Tensor& a, const Tensor& b, Tensor& y);
void scale(Tensor& x, float s);
void softcap(Tensor& x, float cap);
void softmax(const Tensor& x, Tensor& y);
void log_softmax(const Tensor& x, Tensor& y);
void convert(const Tensor& src, Tensor& dst);
// The batched ops: loops over this table's attention and convert (cpu/seq_loops.h).
void attention_seqs(const Tensor& q, std::span<const AttentionSeq> seqs,
                    std::span<const int32_t> q_positions, const AttentionParams& p, Tensor& out);
void convert_rows(std::span<const RowCopy> copies);
// Each row through backend/sample_row.h (both tables).
void sample_rows(Tensor& logits, std::span<const SampleRow> rows, const SampleOutputs& out);

// Element i of a contiguous f32/bf16/f16 buffer, as f32.
float load_as_f32(const void* data, DType dtype, int64_t i);
// Stores v into element i of a contiguous f32/bf16/f16 buffer (round to nearest even).
void store_from_f32(void* data, DType dtype, int64_t i, float v);

// Scalar activations shared with the fast paths' tails.
float silu(float g);
float gelu_tanh(float g);

}  // namespace cairn::ops::ref
