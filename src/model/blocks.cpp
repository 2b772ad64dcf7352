#include "model/blocks.h"

#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

#include "backend/device.h"

namespace cairn {
namespace {

// RMSNorm over each head's head_dim values, in place. t [n, heads * head_dim].
void head_norm(Tensor& t, const Tensor& w, int64_t head_dim, float eps) {
  Tensor rows = t.reshape({t.numel() / head_dim, head_dim});
  ops::rms_norm(rows, w, eps, rows);
}

// The parts of a fused product's output y [n, Σ widths]: views of its one row at n = 1
// (each part contiguous there) unless `own`, else tensors of their own that split() (or
// split_rope) fills.
std::vector<Tensor> parts_of(const Tensor& y, std::initializer_list<int64_t> widths,
                             bool own = false) {
  const int64_t n = y.dim(0);
  std::vector<Tensor> parts;
  size_t at = 0;
  for (int64_t w : widths) {
    if (n == 1 && !own)
      parts.push_back(Tensor::view_of(y.storage(), y.offset_bytes() + at, {1, w}, DType::kF32));
    else
      parts.push_back(empty_on(y.device(), {n, w}, DType::kF32));
    at += static_cast<size_t>(w) * sizeof(float);
  }
  return parts;
}

// Fills the parts of a fused product's output y from its columns (nothing at n = 1, where
// they view it).
void split(const Tensor& y, std::initializer_list<Tensor*> parts) {
  if (y.dim(0) == 1) return;
  std::vector<Tensor*> outs(parts);
  ops::split_columns(y, outs);
}

void project(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) {
  ops::matmul(x, w, bias.defined() ? &bias : nullptr, y);
}

// RoPE on q3 [n, n_heads, hd] and k3 [n, n_kv_heads, hd]: one launch when k's one row follows
// q's in memory (a fused projection's views at n = 1), as every head is rotated on its own.
void rope_qk(Tensor& q3, Tensor& k3, std::span<const int32_t> positions,
             const ops::RopeParams& rope) {
  if (q3.dim(0) == 1 && q3.storage() == k3.storage() &&
      k3.offset_bytes() == q3.offset_bytes() + q3.nbytes()) {
    Tensor qk = Tensor::view_of(q3.storage(), q3.offset_bytes(),
                                {1, q3.dim(1) + k3.dim(1), q3.dim(2)}, DType::kF32);
    ops::rope(qk, positions, rope);
    return;
  }
  ops::rope(q3, positions, rope);
  ops::rope(k3, positions, rope);
}

// The first n rows of part p of a fused output: views of `whole`'s first row at n = 1.
Tensor first_rows_of_part(const Tensor& part, const Tensor& whole, size_t at_bytes, int64_t n) {
  if (n == 1 && whole.defined())
    return Tensor::view_of(whole.storage(), whole.offset_bytes() + at_bytes, {1, part.dim(1)},
                           DType::kF32);
  return part.slice_rows(0, n);
}

LayerScratch attention_scratch(const AttentionWeights& w, Device d, int64_t n) {
  LayerScratch t;
  if (w.wqkv.defined()) {
    t.qkv = empty_on(d, {n, w.wqkv.dim(0)}, DType::kF32);
    // With head norms q, k and v get buffers of their own even at one row, so that one pass
    // splits, norms and rotates them (split_rope) instead of two norms and a RoPE in place.
    const bool own = w.q_norm.defined() || w.k_norm.defined();
    std::vector<Tensor> p = parts_of(t.qkv, {w.wq.dim(0), w.wk.dim(0), w.wv.dim(0)}, own);
    t.q = std::move(p[0]), t.k = std::move(p[1]), t.v = std::move(p[2]);
  } else {
    t.q = empty_on(d, {n, w.wq.dim(0)}, DType::kF32);
    t.k = empty_on(d, {n, w.wk.dim(0)}, DType::kF32);
    t.v = empty_on(d, {n, w.wv.dim(0)}, DType::kF32);
  }
  // Of the dtype the o product takes its x in (the attention writes it rounded: no pass of its
  // own before the product).
  t.att = empty_on(d, {n, w.wo.dim(1)}, ops::matmul_input_dtype(w.wo));
  return t;
}

void add_mlp_scratch(const MlpWeights& w, Device d, int64_t n, LayerScratch& t) {
  if (w.gate_up.defined()) {
    t.gate_up = empty_on(d, {n, w.gate_up.dim(0)}, DType::kF32);
    std::vector<Tensor> p = parts_of(t.gate_up, {w.gate.dim(0), w.up.dim(0)});
    t.gate = std::move(p[0]), t.up = std::move(p[1]);
  } else {
    t.gate = empty_on(d, {n, w.gate.dim(0)}, DType::kF32);
    t.up = empty_on(d, {n, w.up.dim(0)}, DType::kF32);
  }
  const DType act = ops::matmul_input_dtype(w.down);
  if (act != DType::kF32) t.act = empty_on(d, {n, w.down.dim(1)}, act);
}

}  // namespace

LayerScratch layer_scratch(const LayerWeights& w, Device device, int64_t n) {
  LayerScratch t = attention_scratch(w.attn, device, n);
  add_mlp_scratch(w.mlp, device, n, t);
  return t;
}

LayerScratch first_rows(const LayerScratch& s, int64_t n) {
  auto rows = [n](const Tensor& t) { return t.defined() ? t.slice_rows(0, n) : Tensor(); };
  LayerScratch r{rows(s.qkv), {}, {}, {}, rows(s.att), rows(s.gate_up), {}, {}, rows(s.act)};
  const size_t q_bytes = static_cast<size_t>(s.q.dim(1)) * sizeof(float);
  const size_t k_bytes = static_cast<size_t>(s.k.dim(1)) * sizeof(float);
  r.q = first_rows_of_part(s.q, s.qkv, 0, n);
  r.k = first_rows_of_part(s.k, s.qkv, q_bytes, n);
  r.v = first_rows_of_part(s.v, s.qkv, q_bytes + k_bytes, n);
  const size_t gate_bytes = static_cast<size_t>(s.gate.dim(1)) * sizeof(float);
  r.gate = first_rows_of_part(s.gate, s.gate_up, 0, n);
  r.up = first_rows_of_part(s.up, s.gate_up, gate_bytes, n);
  return r;
}

void attention_in(const AttentionWeights& w, const AttentionShape& s, const ops::RopeParams& rope,
                  std::span<const int32_t> positions, const Tensor& x, LayerScratch& t) {
  const int64_t n = x.dim(0);
  Tensor q3 = t.q.reshape({n, s.n_heads, s.head_dim});
  Tensor k3 = t.k.reshape({n, s.n_kv_heads, s.head_dim});
  // Split, head-normed (q_norm, k_norm) and rotated in one pass where q has a buffer of its own
  // (every n > 1; one row of a model with head norms).
  if (t.qkv.defined() && t.q.storage() != t.qkv.storage()) {
    project(x, w.wqkv, w.bqkv, t.qkv);
    Tensor v3 = t.v.reshape({n, s.n_kv_heads, s.head_dim});
    const ops::HeadNorms norms{w.q_norm.defined() ? &w.q_norm : nullptr,
                               w.k_norm.defined() ? &w.k_norm : nullptr, s.norm_eps};
    ops::split_rope(t.qkv, positions, rope, q3, k3, v3, norms);
    return;
  }
  if (t.qkv.defined()) {
    project(x, w.wqkv, w.bqkv, t.qkv);
    split(t.qkv, {&t.q, &t.k, &t.v});
  } else {
    project(x, w.wq, w.bq, t.q), project(x, w.wk, w.bk, t.k), project(x, w.wv, w.bv, t.v);
  }
  if (w.q_norm.defined()) head_norm(t.q, w.q_norm, s.head_dim, s.norm_eps);
  if (w.k_norm.defined()) head_norm(t.k, w.k_norm, s.head_dim, s.norm_eps);
  rope_qk(q3, k3, positions, rope);
}

void attend(const AttentionShape& s, const ops::AttentionParams& params, int il,
            const ForwardBatch& batch, KvView& kv, LayerScratch& t) {
  const int64_t n = batch.n_tokens();
  Tensor q3 = t.q.slice_rows(0, n).reshape({n, s.n_heads, s.head_dim});
  Tensor k3 = t.k.slice_rows(0, n).reshape({n, s.n_kv_heads, s.head_dim});
  Tensor v3 = t.v.slice_rows(0, n).reshape({n, s.n_kv_heads, s.head_dim});
  Tensor att = t.att.slice_rows(0, n).reshape({n, s.n_heads, s.head_dim});
  kv.append_and_attend(il, batch, q3, k3, v3, params, att);
}

void attention_block(const AttentionWeights& w, const AttentionShape& s,
                     const ops::RopeParams& rope, const ops::AttentionParams& params, int il,
                     const ForwardBatch& batch, KvView& kv, const Tensor& x, Tensor& out) {
  LayerScratch t = attention_scratch(w, x.device(), x.dim(0));
  attention_in(w, s, rope, batch.positions, x, t);
  attend(s, params, il, batch, kv, t);
  ops::matmul(t.att, w.wo, nullptr, out);
}

void gated_mlp(const MlpWeights& w, ops::Activation act, const Tensor& x, LayerScratch& t,
               Tensor& out) {
  // The down product's input: the activation written rounded where the product takes it so
  // (scratch made in one batch-invariant mode may serve the other).
  const bool rounded = t.act.defined() && ops::matmul_input_dtype(w.down) == t.act.dtype();
  Tensor& a = rounded ? t.act : t.gate;
  if (t.gate_up.defined() && x.dim(0) > 1) {  // the fused output read in place, not split
    project(x, w.gate_up, Tensor(), t.gate_up);
    ops::gated_activation_fused(t.gate_up, act, a);
  } else {
    if (t.gate_up.defined())
      project(x, w.gate_up, Tensor(), t.gate_up);  // one row: gate and up view it
    else
      project(x, w.gate, Tensor(), t.gate), project(x, w.up, Tensor(), t.up);
    ops::gated_activation(t.gate, t.up, act, a);
  }
  ops::matmul(a, w.down, nullptr, out);
}

void gated_mlp(const MlpWeights& w, ops::Activation act, const Tensor& x, Tensor& out) {
  LayerScratch t;
  add_mlp_scratch(w, x.device(), x.dim(0), t);
  gated_mlp(w, act, x, t, out);
}

Tensor gather_rows(const Tensor& x, const std::vector<int64_t>& rows) {
  Tensor y = empty_on(x.device(), {static_cast<int64_t>(rows.size()), x.dim(1)}, DType::kF32);
  std::vector<ops::RowCopy> copies;  // runs of consecutive rows, one launch for all
  for (size_t i = 0; i < rows.size(); ++i) {
    ops::RowCopy* last = copies.empty() ? nullptr : &copies.back();
    if (last && last->src_row + last->n_rows == rows[i])
      ++last->n_rows;
    else
      copies.push_back({&x, rows[i], &y, static_cast<int64_t>(i), 1});
  }
  if (!copies.empty()) ops::convert_rows(copies);
  return y;
}

}  // namespace cairn
