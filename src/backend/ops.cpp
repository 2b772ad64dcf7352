// The free functions of ops.h: check arguments once, then call the op table of
// the output's device.
#include "backend/ops.h"

#include "backend/op_checks.h"
#include "backend/op_table.h"
#include "core/error.h"

namespace cairn::ops {

void matmul(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y) {
  check_matmul(x, w, bias, y);
  op_table(y.device().kind).matmul(x, w, bias, y);
}

void embedding(const Tensor& table, std::span<const int32_t> ids, Tensor& y) {
  check_embedding(table, ids, y);
  op_table(y.device().kind).embedding(table, ids, y);
}

void rms_norm(const Tensor& x, const Tensor& w, float eps, Tensor& y) {
  check_norm("rms_norm", x, w, nullptr, y);
  op_table(y.device().kind).rms_norm(x, w, eps, y);
}

void layer_norm(const Tensor& x, const Tensor& w, const Tensor* b, float eps, Tensor& y) {
  check_norm("layer_norm", x, w, b, y);
  op_table(y.device().kind).layer_norm(x, w, b, eps, y);
}

void rope(Tensor& x, std::span<const int32_t> positions, const RopeParams& p) {
  check_rope(x, positions, p);
  op_table(x.device().kind).rope(x, positions, p);
}

void attention(const Tensor& q, const Tensor& k, const Tensor& v,
               std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
               const AttentionParams& p, Tensor& out) {
  if (p.kv_quant.bits != 0)
    fail(ErrorCode::kInvalidArgument,
         "attention: kv_quant (quantized K/V rows) is read by attention_seqs only");
  check_attention(q, k, v, q_positions, kv_positions, out);
  op_table(out.device().kind).attention(q, k, v, q_positions, kv_positions, p, out);
}

void attention_seqs(const Tensor& q, std::span<const AttentionSeq> seqs,
                    std::span<const int32_t> q_positions, const AttentionParams& p, Tensor& out) {
  check_attention_seqs(q, seqs, q_positions, p.kv_quant, out);
  op_table(out.device().kind).attention_seqs(q, seqs, q_positions, p, out);
}

void attention_pages(const Tensor& q, const KvPages& kv, std::span<const AttentionSeq> seqs,
                     std::span<const int32_t> q_positions, const AttentionParams& p, Tensor& out) {
  check_attention_pages(q, kv, seqs, q_positions, p.kv_quant, out);
  op_table(out.device().kind).attention_pages(q, kv, seqs, q_positions, p, out);
}

void gated_activation(const Tensor& gate, const Tensor& up, Activation act, Tensor& out) {
  check_same_f32("gated_activation", gate, up);
  check_same_f32("gated_activation", gate, out);
  op_table(out.device().kind).gated_activation(gate, up, act, out);
}

void gated_activation_fused(const Tensor& gate_up, Activation act, Tensor& out) {
  check_gated_fused(gate_up, out);
  op_table(out.device().kind).gated_activation_fused(gate_up, act, out);
}

void add(const Tensor& a, const Tensor& b, Tensor& y) {
  check_same_f32("add", a, b);
  check_same_f32("add", a, y);
  op_table(y.device().kind).add(a, b, y);
}

void add_rms_norm(Tensor& x, const Tensor& r, const Tensor& w, float eps, Tensor& y) {
  check_same_f32("add_rms_norm", x, r);
  check_norm("add_rms_norm", x, w, nullptr, y);
  if (y.raw() == x.raw() || y.raw() == r.raw())
    fail(ErrorCode::kInvalidArgument, "add_rms_norm: y must not alias x or r");
  const OpTable& t = op_table(y.device().kind);
  if (t.add_rms_norm) return t.add_rms_norm(x, r, w, eps, y);
  t.add(x, r, x);  // no fused entry: the two ops, whose bits the fused one must give
  t.rms_norm(x, w, eps, y);
}

void scale(Tensor& x, float s) {
  check_f32("scale", x);
  op_table(x.device().kind).scale(x, s);
}

void softcap(Tensor& x, float cap) {
  check_f32("softcap", x);
  if (!(cap > 0.0f)) fail(ErrorCode::kInvalidArgument, "softcap: cap must be > 0 (got {})", cap);
  op_table(x.device().kind).softcap(x, cap);
}

void softmax(const Tensor& x, Tensor& y) {
  check_same_f32("softmax", x, y);
  op_table(y.device().kind).softmax(x, y);
}

void log_softmax(const Tensor& x, Tensor& y) {
  check_same_f32("log_softmax", x, y);
  op_table(y.device().kind).log_softmax(x, y);
}

void convert(const Tensor& src, Tensor& dst) {
  check_convert(src, dst);
  op_table(dst.device().kind).convert(src, dst);
}

void convert_rows(std::span<const RowCopy> copies) {
  check_convert_rows(copies);
  if (copies.empty()) return;
  op_table(copies.front().dst->device().kind).convert_rows(copies);
}

void split_columns(const Tensor& x, std::span<Tensor* const> parts) {
  check_split_columns(x, parts);
  op_table(x.device().kind).split_columns(x, parts);
}

void quantize_rows(std::span<const RowCopy> copies, const KvRowQuant& q) {
  check_quantize_rows(copies, q);
  if (copies.empty()) return;
  op_table(copies.front().dst->device().kind).quantize_rows(copies, q);
}

void sample_rows(Tensor& logits, std::span<const SampleRow> rows, const SampleOutputs& out) {
  check_sample_rows(logits, rows, out);
  if (rows.empty()) return;
  op_table(logits.device().kind).sample_rows(logits, rows, out);
}

}  // namespace cairn::ops
