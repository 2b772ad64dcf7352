#include "backend/op_checks.h"

#include "core/error.h"

namespace cairn::ops {
namespace {

// A contiguous tensor of `dtype` (or any float dtype when float_ok) and `ndim` dims.
void need_tensor(const char* op, const char* name, const Tensor& t, int ndim, bool float_ok) {
  if (!t.defined()) fail(ErrorCode::kInvalidArgument, "{}: {} is undefined", op, name);
  if (ndim > 0 && t.ndim() != ndim)
    fail(ErrorCode::kInvalidArgument, "{}: {} must have {} dims (got {})", op, name, ndim,
         t.describe());
  bool dtype_ok = float_ok ? dtype_is_float(t.dtype()) : t.dtype() == DType::kF32;
  if (!dtype_ok)
    fail(ErrorCode::kInvalidArgument, "{}: {} must be {} (got {})", op, name,
         float_ok ? "f32, bf16 or f16" : "f32", t.describe());
  if (!t.is_contiguous())
    fail(ErrorCode::kInvalidArgument, "{}: {} must be contiguous ({})", op, name, t.describe());
}

void same_device(const char* op, const Tensor& a, const Tensor& b) {
  if (!(a.device() == b.device()))
    fail(ErrorCode::kInvalidArgument, "{}: {} and {} are on different devices", op, a.describe(),
         b.describe());
}

void need_dim(const char* op, const char* what, int64_t got, int64_t want) {
  if (got != want)
    fail(ErrorCode::kInvalidArgument, "{}: {} is {}, expected {}", op, what, got, want);
}

}  // namespace

void check_matmul(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y) {
  need_tensor("matmul", "x", x, 2, false);
  need_tensor("matmul", "w", w, 2, true);
  need_tensor("matmul", "y", y, 2, false);
  need_dim("matmul", "w's dim 1 (k)", w.dim(1), x.dim(1));
  need_dim("matmul", "y's dim 0 (rows of x)", y.dim(0), x.dim(0));
  need_dim("matmul", "y's dim 1 (rows of w)", y.dim(1), w.dim(0));
  if (bias) {
    need_tensor("matmul", "bias", *bias, 1, false);
    need_dim("matmul", "bias length", bias->dim(0), w.dim(0));
    same_device("matmul", *bias, y);
  }
  same_device("matmul", x, y);
  same_device("matmul", w, y);
}

void check_embedding(const Tensor& table, std::span<const int32_t> ids, const Tensor& y) {
  need_tensor("embedding", "table", table, 2, true);
  need_tensor("embedding", "y", y, 2, false);
  need_dim("embedding", "y's dim 0 (number of ids)", y.dim(0), static_cast<int64_t>(ids.size()));
  need_dim("embedding", "y's dim 1", y.dim(1), table.dim(1));
  same_device("embedding", table, y);
  const int64_t vocab = table.dim(0);
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= vocab)
      fail(ErrorCode::kInvalidArgument, "embedding: id {} at index {} is outside [0, {})", ids[i],
           i, vocab);
}

void check_norm(const char* op, const Tensor& x, const Tensor& w, const Tensor* b,
                const Tensor& y) {
  need_tensor(op, "x", x, 0, false);
  if (x.ndim() < 1) fail(ErrorCode::kInvalidArgument, "{}: x must have at least 1 dim", op);
  check_same_f32(op, x, y);
  need_tensor(op, "w", w, 1, false);
  need_dim(op, "w length", w.dim(0), x.dim(-1));
  same_device(op, w, y);
  if (b) {
    need_tensor(op, "b", *b, 1, false);
    need_dim(op, "b length", b->dim(0), x.dim(-1));
    same_device(op, *b, y);
  }
}

void check_rope(const Tensor& x, std::span<const int32_t> positions, const RopeParams& p) {
  need_tensor("rope", "x", x, 3, false);
  need_dim("rope", "number of positions", static_cast<int64_t>(positions.size()), x.dim(0));
  if (p.rotary_dim <= 0 || p.rotary_dim % 2 != 0 || p.rotary_dim > x.dim(2))
    fail(ErrorCode::kInvalidArgument, "rope: rotary_dim {} must be even and in (0, {}]",
         p.rotary_dim, x.dim(2));
  need_dim("rope", "inv_freq length", static_cast<int64_t>(p.inv_freq.size()), p.rotary_dim / 2);
}

void check_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                     std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
                     const Tensor& out) {
  need_tensor("attention", "q", q, 3, false);
  need_tensor("attention", "k", k, 3, true);
  need_tensor("attention", "v", v, 3, true);
  need_tensor("attention", "out", out, 3, false);
  if (!(q.shape() == out.shape()))
    fail(ErrorCode::kInvalidArgument, "attention: out {} must have q's shape {}", out.describe(),
         q.describe());
  if (!(k.shape() == v.shape()) || k.dtype() != v.dtype())
    fail(ErrorCode::kInvalidArgument, "attention: k {} and v {} differ", k.describe(),
         v.describe());
  need_dim("attention", "k's head_dim", k.dim(2), q.dim(2));
  if (k.dim(1) == 0 || q.dim(1) % k.dim(1) != 0)
    fail(ErrorCode::kInvalidArgument, "attention: n_heads {} is not a multiple of n_kv_heads {}",
         q.dim(1), k.dim(1));
  need_dim("attention", "number of q_positions", static_cast<int64_t>(q_positions.size()),
           q.dim(0));
  need_dim("attention", "number of kv_positions", static_cast<int64_t>(kv_positions.size()),
           k.dim(0));
  same_device("attention", q, out);
  same_device("attention", k, out);
  same_device("attention", v, out);
}

void check_same_f32(const char* op, const Tensor& a, const Tensor& b) {
  need_tensor(op, "input", a, 0, false);
  need_tensor(op, "output", b, 0, false);
  if (!(a.shape() == b.shape()))
    fail(ErrorCode::kInvalidArgument, "{}: shapes {} and {} differ", op, a.describe(),
         b.describe());
  same_device(op, a, b);
}

void check_f32(const char* op, const Tensor& x) {
  need_tensor(op, "x", x, 0, false);
}

void check_convert(const Tensor& src, const Tensor& dst) {
  need_tensor("convert", "src", src, 0, true);
  need_tensor("convert", "dst", dst, 0, true);
  if (!(src.shape() == dst.shape()))
    fail(ErrorCode::kInvalidArgument, "convert: shapes {} and {} differ", src.describe(),
         dst.describe());
  same_device("convert", src, dst);
}

}  // namespace cairn::ops
