#include "model/blocks.h"

#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

#include "backend/device.h"

namespace cairn {
namespace {

Tensor project(const Tensor& x, const Tensor& w, const Tensor& bias) {
  Tensor y = empty_on(x.device(), {x.dim(0), w.dim(0)}, DType::kF32);
  ops::matmul(x, w, bias.defined() ? &bias : nullptr, y);
  return y;
}

// RMSNorm over each head's head_dim values, in place. t [n, heads * head_dim].
void head_norm(Tensor& t, const Tensor& w, int64_t head_dim, float eps) {
  Tensor rows = t.reshape({t.numel() / head_dim, head_dim});
  ops::rms_norm(rows, w, eps, rows);
}

// The parts of a fused projection's output y [n, Σ widths], in order: views of
// its one row when n = 1 (each part contiguous there), else copies split from
// its columns.
std::vector<Tensor> split_output(const Tensor& y, std::initializer_list<int64_t> widths) {
  const int64_t n = y.dim(0);
  std::vector<Tensor> parts;
  size_t at = 0;
  for (int64_t w : widths) {
    if (n == 1) {
      parts.push_back(Tensor::view_of(y.storage(), y.offset_bytes() + at, {1, w}, DType::kF32));
      at += static_cast<size_t>(w) * sizeof(float);
    } else {
      parts.push_back(empty_on(y.device(), {n, w}, DType::kF32));
    }
  }
  if (n == 1) return parts;
  std::vector<Tensor*> outs;
  for (Tensor& p : parts) outs.push_back(&p);
  ops::split_columns(y, outs);
  return parts;
}

// q, k, v [n, rows of wq / wk / wv]: one product when the weights are fused.
void project_qkv(const AttentionWeights& w, const Tensor& x, Tensor& q, Tensor& k, Tensor& v) {
  if (!w.wqkv.defined()) {
    q = project(x, w.wq, w.bq), k = project(x, w.wk, w.bk), v = project(x, w.wv, w.bv);
    return;
  }
  std::vector<Tensor> p =
      split_output(project(x, w.wqkv, w.bqkv), {w.wq.dim(0), w.wk.dim(0), w.wv.dim(0)});
  q = std::move(p[0]), k = std::move(p[1]), v = std::move(p[2]);
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

}  // namespace

void attention_block(const AttentionWeights& w, const AttentionShape& s,
                     const ops::RopeParams& rope, const ops::AttentionParams& params, int il,
                     const ForwardBatch& batch, KvView& kv, const Tensor& x, Tensor& out) {
  int64_t n = x.dim(0);
  Tensor q, k, v;  // [n, n_heads * head_dim], [n, n_kv_heads * head_dim] twice
  project_qkv(w, x, q, k, v);
  if (w.q_norm.defined()) head_norm(q, w.q_norm, s.head_dim, s.norm_eps);
  if (w.k_norm.defined()) head_norm(k, w.k_norm, s.head_dim, s.norm_eps);
  Tensor q3 = q.reshape({n, s.n_heads, s.head_dim});
  Tensor k3 = k.reshape({n, s.n_kv_heads, s.head_dim});
  Tensor v3 = v.reshape({n, s.n_kv_heads, s.head_dim});
  rope_qk(q3, k3, batch.positions, rope);
  Tensor att = empty_on(x.device(), {n, s.n_heads, s.head_dim}, DType::kF32);
  kv.append_and_attend(il, batch, q3, k3, v3, params, att);
  ops::matmul(att.reshape({n, s.n_heads * s.head_dim}), w.wo, nullptr, out);
}

void gated_mlp(const MlpWeights& w, ops::Activation act, const Tensor& x, Tensor& out) {
  Tensor gate, up;
  if (w.gate_up.defined()) {
    std::vector<Tensor> p =
        split_output(project(x, w.gate_up, Tensor()), {w.gate.dim(0), w.up.dim(0)});
    gate = std::move(p[0]), up = std::move(p[1]);
  } else {
    gate = project(x, w.gate, Tensor());
    up = project(x, w.up, Tensor());
  }
  ops::gated_activation(gate, up, act, gate);
  ops::matmul(gate, w.down, nullptr, out);
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
