// The free functions of ops.h: check arguments once, then call the op table of
// the output's device.
#include "backend/ops.h"

#include "backend/device.h"
#include "backend/op_checks.h"
#include "backend/op_table.h"
#include "core/error.h"

namespace cairn::ops {
namespace {

// A table whose products take rounded inputs writes them rounded too (op_table.h).
bool rounds(const OpTable& t) {
  return t.matmul_input_dtype != nullptr;
}

Tensor f32_like(const Tensor& t) {
  return empty_on(t.device(), t.shape(), DType::kF32);
}

// op(out), or, for a bf16/f16 out that the table's entries do not write, op into f32 then
// rounded into out.
template <typename Op>
void into(const OpTable& t, Tensor& out, Op op) {
  if (out.dtype() == DType::kF32 || rounds(t)) return op(out);
  Tensor out32 = f32_like(out);
  op(out32);
  t.convert(out32, out);
}

}  // namespace

void matmul(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y) {
  check_matmul(x, w, bias, y);
  const OpTable& t = op_table(y.device().kind);
  if (x.dtype() == DType::kF32 || rounds(t)) return t.matmul(x, w, bias, y);
  Tensor x32 = f32_like(x);  // exact: every bf16/f16 value is an f32 value
  t.convert(x, x32);
  t.matmul(x32, w, bias, y);
}

DType matmul_input_dtype(const Tensor& w) {
  if (!w.defined()) return DType::kF32;
  const OpTable& t = op_table(w.device().kind);
  return rounds(t) ? t.matmul_input_dtype(w) : DType::kF32;
}

void embedding(const Tensor& table, std::span<const int32_t> ids, Tensor& y) {
  check_embedding(table, ids, y);
  op_table(y.device().kind).embedding(table, ids, y);
}

void rms_norm(const Tensor& x, const Tensor& w, float eps, Tensor& y) {
  check_norm("rms_norm", x, w, nullptr, y);
  const OpTable& t = op_table(y.device().kind);
  into(t, y, [&](Tensor& out) { t.rms_norm(x, w, eps, out); });
}

void layer_norm(const Tensor& x, const Tensor& w, const Tensor* b, float eps, Tensor& y) {
  check_norm("layer_norm", x, w, b, y);
  check_same_f32("layer_norm", x, y);
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
  const OpTable& t = op_table(out.device().kind);
  into(t, out, [&](Tensor& o) { t.attention(q, k, v, q_positions, kv_positions, p, o); });
}

void attention_seqs(const Tensor& q, std::span<const AttentionSeq> seqs,
                    std::span<const int32_t> q_positions, const AttentionParams& p, Tensor& out) {
  check_attention_seqs(q, seqs, q_positions, p.kv_quant, out);
  const OpTable& t = op_table(out.device().kind);
  into(t, out, [&](Tensor& o) { t.attention_seqs(q, seqs, q_positions, p, o); });
}

void attention_pages(const Tensor& q, const KvPages& kv, std::span<const AttentionSeq> seqs,
                     std::span<const int32_t> q_positions, const AttentionParams& p, Tensor& out) {
  check_attention_pages(q, kv, seqs, q_positions, p.kv_quant, out);
  const OpTable& t = op_table(out.device().kind);
  into(t, out, [&](Tensor& o) { t.attention_pages(q, kv, seqs, q_positions, p, o); });
}

void gated_activation(const Tensor& gate, const Tensor& up, Activation act, Tensor& out) {
  check_same_f32("gated_activation", gate, up);
  check_output("gated_activation", gate, out);
  check_output("gated_activation", up, out);
  const OpTable& t = op_table(out.device().kind);
  into(t, out, [&](Tensor& o) { t.gated_activation(gate, up, act, o); });
}

void gated_activation_fused(const Tensor& gate_up, Activation act, Tensor& out) {
  check_gated_fused(gate_up, out);
  const OpTable& t = op_table(out.device().kind);
  into(t, out, [&](Tensor& o) { t.gated_activation_fused(gate_up, act, o); });
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
  into(t, y, [&](Tensor& out) {
    if (t.add_rms_norm) return t.add_rms_norm(x, r, w, eps, out);
    t.add(x, r, x);  // no fused entry: the two ops, whose bits the fused one must give
    t.rms_norm(x, w, eps, out);
  });
}

void split_rope_composed(const OpTable& t, const Tensor& qkv, std::span<const int32_t> positions,
                         const RopeParams& p, Tensor& q, Tensor& k, Tensor& v,
                         const HeadNorms& norms) {
  Tensor q2 = q.reshape({q.dim(0), q.dim(1) * q.dim(2)});
  Tensor k2 = k.reshape({k.dim(0), k.dim(1) * k.dim(2)});
  Tensor v2 = v.reshape({v.dim(0), v.dim(1) * v.dim(2)});
  Tensor* const parts[3] = {&q2, &k2, &v2};
  t.split_columns(qkv, std::span<Tensor* const>(parts));
  for (auto [x, w] : {std::pair{&q, norms.q}, std::pair{&k, norms.k}}) {
    if (w != nullptr) {
      Tensor rows = x->reshape({x->dim(0) * x->dim(1), x->dim(2)});  // a head a row
      t.rms_norm(rows, *w, norms.eps, rows);
    }
    t.rope(*x, positions, p);
  }
}

void split_rope(const Tensor& qkv, std::span<const int32_t> positions, const RopeParams& p,
                Tensor& q, Tensor& k, Tensor& v, const HeadNorms& norms) {
  check_split_rope(qkv, positions, p, q, k, v, norms);
  const OpTable& t = op_table(qkv.device().kind);
  if (t.split_rope) return t.split_rope(qkv, positions, p, q, k, v, norms);
  split_rope_composed(t, qkv, positions, p, q, k, v, norms);  // no fused entry
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
