#include "model/tp/sharded_weights.h"

#include <cstring>

#include "core/error.h"

namespace cairn::tp {
namespace {

void check_host_float(const Tensor& t, const char* what) {
  if (!t.defined()) return;
  bool float_dtype =
      t.dtype() == DType::kF32 || t.dtype() == DType::kBF16 || t.dtype() == DType::kF16;
  if (t.device().kind != DeviceKind::kCpu || !float_dtype || t.quant() != nullptr)
    fail(ErrorCode::kUnsupported,
         "tensor parallel: {} is {}{}; the ranks shard host f32, bf16 or f16 weights", what,
         t.describe(), t.device().kind == DeviceKind::kCpu ? "" : " on a GPU");
}

// Rows [begin, end) of t (a view), or t itself when undefined.
Tensor rows_of(const Tensor& t, int64_t begin, int64_t end) {
  return t.defined() ? t.slice_rows(begin, end) : t;
}

AttentionWeights shard_attention(const AttentionWeights& a, int64_t hd, const RankShard& s) {
  for (const Tensor* t : {&a.wq, &a.wk, &a.wv, &a.wo}) check_host_float(*t, "an attention matrix");
  const int64_t q0 = s.q_heads.begin * hd, q1 = s.q_heads.end * hd;
  const int64_t k0 = s.kv_heads.begin * hd, k1 = s.kv_heads.end * hd;
  AttentionWeights r;
  r.wq = rows_of(a.wq, q0, q1);
  r.wk = rows_of(a.wk, k0, k1);
  r.wv = rows_of(a.wv, k0, k1);
  r.wo = copy_columns(a.wo, q0, q1);
  r.bq = rows_of(a.bq, q0, q1);
  r.bk = rows_of(a.bk, k0, k1);
  r.bv = rows_of(a.bv, k0, k1);
  r.q_norm = a.q_norm;  // per head_dim: the same on every head
  r.k_norm = a.k_norm;
  return r;
}

MlpWeights shard_mlp(const MlpWeights& m, const RankShard& s) {
  for (const Tensor* t : {&m.gate, &m.up, &m.down}) check_host_float(*t, "an MLP matrix");
  const RowRange& f = s.intermediate;
  MlpWeights r;
  r.gate = rows_of(m.gate, f.begin, f.end);
  r.up = rows_of(m.up, f.begin, f.end);
  r.down = copy_columns(m.down, f.begin, f.end);
  return r;
}

}  // namespace

Tensor copy_columns(const Tensor& m, int64_t begin, int64_t end) {
  CAIRN_CHECK(m.ndim() == 2 && m.is_contiguous() && 0 <= begin && begin <= end && end <= m.dim(1),
              "columns [{}, {}) of {}", begin, end, m.describe());
  const int64_t rows = m.dim(0), cols = m.dim(1), width = end - begin;
  Tensor out = Tensor::empty({rows, width}, m.dtype());
  const size_t elem = dtype_bytes(m.dtype(), 1);
  const auto* src = static_cast<const uint8_t*>(m.raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  for (int64_t i = 0; i < rows; ++i)
    std::memcpy(dst + static_cast<size_t>(i * width) * elem,
                src + static_cast<size_t>(i * cols + begin) * elem,
                static_cast<size_t>(width) * elem);
  return out;
}

DecoderWeights shard_weights(const DecoderWeights& w, int64_t head_dim, const RankShard& s) {
  check_host_float(w.embed, "the embedding");
  check_host_float(w.lm_head, "the LM head");
  DecoderWeights r;
  r.embed = w.embed.slice_rows(s.vocab.begin, s.vocab.end);
  bool tied = w.lm_head.storage() == w.embed.storage() &&
              w.lm_head.offset_bytes() == w.embed.offset_bytes();
  r.lm_head = tied ? r.embed : w.lm_head.slice_rows(s.vocab.begin, s.vocab.end);
  r.final_norm = w.final_norm;
  for (const LayerWeights& l : w.layers) {
    LayerWeights x;
    x.attn_norm = l.attn_norm;
    x.post_attn_norm = l.post_attn_norm;
    x.ffn_norm = l.ffn_norm;
    x.post_ffn_norm = l.post_ffn_norm;
    x.attn = shard_attention(l.attn, head_dim, s);
    x.mlp = shard_mlp(l.mlp, s);
    r.layers.push_back(std::move(x));
  }
  return r;
}

}  // namespace cairn::tp
