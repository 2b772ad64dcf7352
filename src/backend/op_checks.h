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
// kv_quant enabled (bits ≠ 0): every K/V is u8 [*, n_kv_heads, kv_quant.row_bytes(head_dim)].
void check_attention_seqs(const Tensor& q, std::span<const AttentionSeq> seqs,
                          std::span<const int32_t> q_positions, const KvRowQuant& kv_quant,
                          const Tensor& out);
// Pages of one dtype (u8 when kv_quant is enabled), positive page_tokens and
// n_kv_heads, every sequence's pages inside kv.pages, query rows disjoint.
void check_attention_pages(const Tensor& q, const KvPages& kv, std::span<const AttentionSeq> seqs,
                           std::span<const int32_t> q_positions, const KvRowQuant& kv_quant,
                           const Tensor& out);
// Same shape, f32, contiguous, one device: the elementwise and row-wise ops.
void check_same_f32(const char* op, const Tensor& a, const Tensor& b);
// As check_same_f32 for an op's input and output, but the output may be bf16/f16 (the f32
// result rounded), then disjoint from the input.
void check_output(const char* op, const Tensor& in, const Tensor& out);
void check_gated_fused(const Tensor& gate_up, const Tensor& out);
void check_split_rope(const Tensor& qkv, std::span<const int32_t> positions, const RopeParams& p,
                      const Tensor& q, const Tensor& k, const Tensor& v, const HeadNorms& norms);
void check_f32(const char* op, const Tensor& x);
void check_convert(const Tensor& src, const Tensor& dst);
void check_convert_rows(std::span<const RowCopy> copies);
// x f32 [n, W]; parts f32 [n, w_i] contiguous on x's device with Σ w_i = W.
void check_split_columns(const Tensor& x, std::span<Tensor* const> parts);
// Bits 4 or 8, group_size 32, 64 or 128 dividing head_dim.
void check_kv_row_quant(const char* op, const KvRowQuant& q, int64_t head_dim);
// Every src f32 [*, H, D], every dst u8 [*, H, q.row_bytes(D)] (one H and D for all),
// rows in range, destination rows disjoint, one device.
void check_quantize_rows(std::span<const RowCopy> copies, const KvRowQuant& q);

// logits f32 [rows.size(), vocab] contiguous; each row's parameters in range, its
// list ids in [0, vocab), penalized and counted ids distinct, counts ≥ 1; the
// outputs of SampleOutputs' shapes and dtypes, on the host or the logits' device.
void check_sample_rows(const Tensor& logits, std::span<const SampleRow> rows,
                       const SampleOutputs& out);

}  // namespace cairn::ops
