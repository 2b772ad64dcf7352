#include "model/blocks.h"

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

}  // namespace

void attention_block(const AttentionWeights& w, const AttentionShape& s,
                     const ops::RopeParams& rope, const ops::AttentionParams& params, int il,
                     const ForwardBatch& batch, KvView& kv, const Tensor& x, Tensor& out) {
  int64_t n = x.dim(0);
  Tensor q = project(x, w.wq, w.bq);  // [n, n_heads * head_dim]
  Tensor k = project(x, w.wk, w.bk);  // [n, n_kv_heads * head_dim]
  Tensor v = project(x, w.wv, w.bv);
  if (w.q_norm.defined()) head_norm(q, w.q_norm, s.head_dim, s.norm_eps);
  if (w.k_norm.defined()) head_norm(k, w.k_norm, s.head_dim, s.norm_eps);
  Tensor q3 = q.reshape({n, s.n_heads, s.head_dim});
  Tensor k3 = k.reshape({n, s.n_kv_heads, s.head_dim});
  Tensor v3 = v.reshape({n, s.n_kv_heads, s.head_dim});
  ops::rope(q3, batch.positions, rope);
  ops::rope(k3, batch.positions, rope);
  Tensor att = empty_on(x.device(), {n, s.n_heads, s.head_dim}, DType::kF32);
  kv.append_and_attend(il, batch, q3, k3, v3, params, att);
  ops::matmul(att.reshape({n, s.n_heads * s.head_dim}), w.wo, nullptr, out);
}

void gated_mlp(const MlpWeights& w, ops::Activation act, const Tensor& x, Tensor& out) {
  int64_t n = x.dim(0);
  Tensor gate = empty_on(x.device(), {n, w.gate.dim(0)}, DType::kF32);
  Tensor up = empty_on(x.device(), {n, w.up.dim(0)}, DType::kF32);
  ops::matmul(x, w.gate, nullptr, gate);
  ops::matmul(x, w.up, nullptr, up);
  ops::gated_activation(gate, up, act, gate);
  ops::matmul(gate, w.down, nullptr, out);
}

Tensor gather_rows(const Tensor& x, const std::vector<int64_t>& rows) {
  Tensor y = empty_on(x.device(), {static_cast<int64_t>(rows.size()), x.dim(1)}, DType::kF32);
  DeviceBackend& b = device_backend(x.device().kind);
  for (size_t i = 0; i < rows.size(); ++i) {
    Tensor dst = y.slice_rows(static_cast<int64_t>(i), static_cast<int64_t>(i) + 1);
    b.copy(x.slice_rows(rows[i], rows[i] + 1), dst);
  }
  return y;
}

}  // namespace cairn
