#include "backend/op_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace cairn::ops {
namespace {

// The name of a field of item i of a list argument ("copies[3].src"), made into a string only
// when an error message needs it: the per-item checks run for every row block and sequence of
// every call, on the decode step's path.
struct ItemName {
  const char* list;
  size_t i;
  const char* field;
  const char* part = nullptr;  // a property of the field ("copies[3].src's head_dim"), or none
};

std::string name_of(const ItemName& n) {
  if (n.part) return fmt::format("{}[{}].{}'s {}", n.list, n.i, n.field, n.part);
  return fmt::format("{}[{}].{}", n.list, n.i, n.field);
}
const char* name_of(const char* n) {
  return n;
}

// A contiguous tensor of `dtype` (or any float dtype when float_ok) and `ndim` dims.
template <typename Name>
void need_tensor(const char* op, const Name& n, const Tensor& t, int ndim, bool float_ok) {
  if (!t.defined()) fail(ErrorCode::kInvalidArgument, "{}: {} is undefined", op, name_of(n));
  if (ndim > 0 && t.ndim() != ndim)
    fail(ErrorCode::kInvalidArgument, "{}: {} must have {} dims (got {})", op, name_of(n), ndim,
         t.describe());
  bool dtype_ok = float_ok ? dtype_is_float(t.dtype()) : t.dtype() == DType::kF32;
  if (!dtype_ok)
    fail(ErrorCode::kInvalidArgument, "{}: {} must be {} (got {})", op, name_of(n),
         float_ok ? "f32, bf16 or f16" : "f32", t.describe());
  if (!t.is_contiguous())
    fail(ErrorCode::kInvalidArgument, "{}: {} must be contiguous ({})", op, name_of(n),
         t.describe());
}

// A contiguous u8 tensor of 3 dims: quantized K/V rows [*, n_kv_heads, row_bytes].
void need_rows_u8(const char* op, const ItemName& n, const Tensor& t) {
  if (!t.defined()) fail(ErrorCode::kInvalidArgument, "{}: {} is undefined", op, name_of(n));
  if (t.ndim() != 3 || t.dtype() != DType::kU8)
    fail(ErrorCode::kInvalidArgument, "{}: {} must be u8 [rows, n_kv_heads, row_bytes] (got {})",
         op, name_of(n), t.describe());
  if (!t.is_contiguous())
    fail(ErrorCode::kInvalidArgument, "{}: {} must be contiguous ({})", op, name_of(n),
         t.describe());
}

void same_device(const char* op, const Tensor& a, const Tensor& b) {
  if (!(a.device() == b.device()))
    fail(ErrorCode::kInvalidArgument, "{}: {} and {} are on different devices", op, a.describe(),
         b.describe());
}

template <typename Name>
void need_dim(const char* op, const Name& what, int64_t got, int64_t want) {
  if (got != want)
    fail(ErrorCode::kInvalidArgument, "{}: {} is {}, expected {}", op, name_of(what), got, want);
}

// [begin, end) ranges, of rows or bytes: Error(kInvalidArgument) when two overlap.
void need_disjoint(const char* op, const char* what,
                   std::vector<std::pair<uintptr_t, uintptr_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      fail(ErrorCode::kInvalidArgument, "{}: {} overlap", op, what);
}

// The byte range a tensor's elements span.
std::pair<uintptr_t, uintptr_t> bytes_of(const Tensor& t) {
  const auto at = reinterpret_cast<uintptr_t>(t.raw());
  return {at, at + t.nbytes()};
}

// An op's f32 input and its output (f32, or any float dtype when float_out) of one shape, on
// one device.
void need_pair(const char* op, const Tensor& in, const Tensor& out, bool float_out) {
  need_tensor(op, "input", in, 0, false);
  need_tensor(op, "output", out, 0, float_out);
  if (!(in.shape() == out.shape()))
    fail(ErrorCode::kInvalidArgument, "{}: shapes {} and {} differ", op, in.describe(),
         out.describe());
  same_device(op, in, out);
}

// Sequence i of attention_seqs: K/V well formed, like sequence 0's, rows in range.
// kv_quant: bits ≠ 0 when K/V are quantized rows (already checked by check_kv_row_quant).
void check_seq(const Tensor& q, std::span<const AttentionSeq> seqs, size_t i,
               const KvRowQuant& kv_quant, const Tensor& out) {
  const char* op = "attention_seqs";
  const AttentionSeq& a = seqs[i];
  if (!a.k || !a.v) fail(ErrorCode::kInvalidArgument, "{}: seqs[{}] has no k or v", op, i);
  const ItemName k_name{"seqs", i, "k"}, v_name{"seqs", i, "v"};
  const bool quantized = kv_quant.bits != 0;
  if (quantized) {
    need_rows_u8(op, k_name, *a.k);
    need_rows_u8(op, v_name, *a.v);
  } else {
    need_tensor(op, k_name, *a.k, 3, true);
    need_tensor(op, v_name, *a.v, 3, true);
  }
  if (!(a.k->shape() == a.v->shape()) || a.k->dtype() != a.v->dtype())
    fail(ErrorCode::kInvalidArgument, "{}: {} {} and {} {} differ", op, name_of(k_name),
         a.k->describe(), name_of(v_name), a.v->describe());
  if (quantized)
    need_dim(op, ItemName{"seqs", i, "k", "row_bytes (kv_quant rows of q's head_dim)"}, a.k->dim(2),
             kv_quant.row_bytes(q.dim(2)));
  else
    need_dim(op, ItemName{"seqs", i, "k", "head_dim"}, a.k->dim(2), q.dim(2));
  const Tensor& k0 = *seqs[0].k;
  if (a.k->dtype() != k0.dtype() || a.k->dim(1) != k0.dim(1))
    fail(ErrorCode::kInvalidArgument, "{}: {} {} differs from seqs[0].k {} in dtype or n_kv_heads",
         op, name_of(k_name), a.k->describe(), k0.describe());
  if (a.k->dim(1) == 0 || q.dim(1) % a.k->dim(1) != 0)
    fail(ErrorCode::kInvalidArgument, "{}: n_heads {} is not a multiple of n_kv_heads {}", op,
         q.dim(1), a.k->dim(1));
  if (a.n_q < 0 || a.q_begin < 0 || a.q_begin + a.n_q > q.dim(0))
    fail(ErrorCode::kInvalidArgument, "{}: seqs[{}]'s query rows [{}, {}) are outside [0, {})", op,
         i, a.q_begin, a.q_begin + a.n_q, q.dim(0));
  if (a.n_kv < 0 || a.n_kv > a.k->dim(0))
    fail(ErrorCode::kInvalidArgument, "{}: seqs[{}]'s n_kv {} is outside [0, {}]", op, i, a.n_kv,
         a.k->dim(0));
  same_device(op, *a.k, out);
  same_device(op, *a.v, out);
}

// Copy c's rows in range of its src and dst; `op` and index i name it.
void need_rows_in_range(const char* op, const RowCopy& c, size_t i) {
  if (c.n_rows < 0 || c.src_row < 0 || c.src_row + c.n_rows > c.src->dim(0) || c.dst_row < 0 ||
      c.dst_row + c.n_rows > c.dst->dim(0))
    fail(ErrorCode::kInvalidArgument, "{}: copies[{}]: rows [{}, +{}) of {} into [{}, +{}) of {}",
         op, i, c.src_row, c.n_rows, c.src->describe(), c.dst_row, c.n_rows, c.dst->describe());
}

// The destination bytes of every copy: Error(kInvalidArgument) when two overlap.
void need_disjoint_dst(const char* op, std::span<const RowCopy> copies) {
  std::vector<std::pair<uintptr_t, uintptr_t>> bytes;
  bytes.reserve(copies.size());
  for (const RowCopy& c : copies) {
    if (c.n_rows == 0 || c.dst->numel() == 0) continue;
    const uintptr_t row_bytes = c.dst->nbytes() / static_cast<size_t>(c.dst->dim(0));
    const uintptr_t first =
        reinterpret_cast<uintptr_t>(c.dst->raw()) + static_cast<uintptr_t>(c.dst_row) * row_bytes;
    bytes.emplace_back(first, first + static_cast<uintptr_t>(c.n_rows) * row_bytes);
  }
  need_disjoint(op, "two copies' destination rows", std::move(bytes));
}

// Copy i of convert_rows: tensors well formed, like copy 0's, rows in range.
void check_copy(std::span<const RowCopy> copies, size_t i) {
  const char* op = "convert_rows";
  const RowCopy& c = copies[i];
  if (!c.src || !c.dst)
    fail(ErrorCode::kInvalidArgument, "{}: copies[{}] has no src or dst", op, i);
  const ItemName src_name{"copies", i, "src"}, dst_name{"copies", i, "dst"};
  need_tensor(op, src_name, *c.src, 0, true);
  need_tensor(op, dst_name, *c.dst, 0, true);
  bool rows_match = c.src->ndim() >= 1 && c.src->ndim() == c.dst->ndim();
  for (int d = 1; rows_match && d < c.src->ndim(); ++d) rows_match = c.src->dim(d) == c.dst->dim(d);
  if (!rows_match)
    fail(ErrorCode::kInvalidArgument, "{}: {} {} and {} {} differ past dim 0", op,
         name_of(src_name), c.src->describe(), name_of(dst_name), c.dst->describe());
  need_rows_in_range(op, c, i);
  if (c.src->dtype() != copies[0].src->dtype() || c.dst->dtype() != copies[0].dst->dtype())
    fail(ErrorCode::kInvalidArgument, "{}: copies[{}]'s dtypes differ from copies[0]'s", op, i);
  same_device(op, *c.src, *copies[0].dst);
  same_device(op, *c.dst, *copies[0].dst);
}

// Copy i of quantize_rows: src f32 [*, H, D], dst u8 [*, H, q.row_bytes(D)] with copy
// 0's H and D, rows in range, on copy 0's device. Checks q against D at copy 0.
void check_quantize_copy(std::span<const RowCopy> copies, size_t i, const KvRowQuant& q) {
  const char* op = "quantize_rows";
  const RowCopy& c = copies[i];
  if (!c.src || !c.dst)
    fail(ErrorCode::kInvalidArgument, "{}: copies[{}] has no src or dst", op, i);
  const ItemName src_name{"copies", i, "src"}, dst_name{"copies", i, "dst"};
  need_tensor(op, src_name, *c.src, 3, false);
  need_rows_u8(op, dst_name, *c.dst);
  if (i == 0) check_kv_row_quant(op, q, c.src->dim(2));
  const Tensor& src0 = *copies[0].src;
  if (c.src->dim(1) != src0.dim(1) || c.src->dim(2) != src0.dim(2))
    fail(ErrorCode::kInvalidArgument, "{}: {} {} differs from copies[0].src {} past dim 0", op,
         name_of(src_name), c.src->describe(), src0.describe());
  const int64_t row_bytes = q.row_bytes(c.src->dim(2));
  if (c.dst->dim(1) != c.src->dim(1) || c.dst->dim(2) != row_bytes)
    fail(ErrorCode::kInvalidArgument,
         "{}: {} {} must be [*, {}, {}] ({}-bit rows of head_dim {} in groups of {})", op,
         name_of(dst_name), c.dst->describe(), c.src->dim(1), row_bytes, q.bits, c.src->dim(2),
         q.group_size);
  need_rows_in_range(op, c, i);
  same_device(op, *c.src, *copies[0].dst);
  same_device(op, *c.dst, *copies[0].dst);
}

}  // namespace

void check_matmul(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y) {
  need_tensor("matmul", "x", x, 2, true);
  need_tensor("matmul", "w", w, 2, true);
  if (x.dtype() != DType::kF32 && x.dtype() != w.dtype())
    fail(ErrorCode::kInvalidArgument, "matmul: x {} must be f32 or w's dtype ({})", x.describe(),
         w.describe());
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
  check_output(op, x, y);
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
  need_tensor("attention", "out", out, 3, true);
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

void check_attention_seqs(const Tensor& q, std::span<const AttentionSeq> seqs,
                          std::span<const int32_t> q_positions, const KvRowQuant& kv_quant,
                          const Tensor& out) {
  const char* op = "attention_seqs";
  need_tensor(op, "q", q, 3, false);
  need_tensor(op, "out", out, 3, true);
  if (kv_quant.bits != 0) check_kv_row_quant(op, kv_quant, q.dim(2));
  if (!(q.shape() == out.shape()))
    fail(ErrorCode::kInvalidArgument, "{}: out {} must have q's shape {}", op, out.describe(),
         q.describe());
  same_device(op, q, out);
  need_dim(op, "number of q_positions", static_cast<int64_t>(q_positions.size()), q.dim(0));
  std::vector<std::pair<uintptr_t, uintptr_t>> rows;
  for (size_t i = 0; i < seqs.size(); ++i) {
    check_seq(q, seqs, i, kv_quant, out);
    if (seqs[i].n_q > 0)
      rows.emplace_back(static_cast<uintptr_t>(seqs[i].q_begin),
                        static_cast<uintptr_t>(seqs[i].q_begin + seqs[i].n_q));
  }
  need_disjoint(op, "two sequences' query rows", std::move(rows));
}

void check_attention_pages(const Tensor& q, const KvPages& kv, std::span<const AttentionSeq> seqs,
                           std::span<const int32_t> q_positions, const KvRowQuant& kv_quant,
                           const Tensor& out) {
  const char* op = "attention_pages";
  need_tensor(op, "q", q, 3, false);
  need_tensor(op, "out", out, 3, true);
  if (!(q.shape() == out.shape()))
    fail(ErrorCode::kInvalidArgument, "{}: out {} must have q's shape {}", op, out.describe(),
         q.describe());
  same_device(op, q, out);
  need_dim(op, "number of q_positions", static_cast<int64_t>(q_positions.size()), q.dim(0));
  if (kv_quant.bits != 0) check_kv_row_quant(op, kv_quant, q.dim(2));
  const bool dtype_ok = kv_quant.bits != 0 ? kv.dtype == DType::kU8 : dtype_is_float(kv.dtype);
  if (!dtype_ok || kv.page_tokens <= 0 || kv.n_kv_heads <= 0 || q.dim(1) % kv.n_kv_heads != 0)
    fail(ErrorCode::kInvalidArgument,
         "{}: pages of {} with {} tokens and {} KV heads do not fit q {} (kv_quant bits {})", op,
         dtype_name(kv.dtype), kv.page_tokens, kv.n_kv_heads, q.describe(), kv_quant.bits);
  std::vector<std::pair<uintptr_t, uintptr_t>> rows;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const AttentionSeq& a = seqs[i];
    const int64_t n_pages = (a.n_kv + kv.page_tokens - 1) / kv.page_tokens;
    if (a.n_q < 0 || a.n_kv < 0 || a.q_begin < 0 || a.q_begin + a.n_q > q.dim(0) ||
        a.page_begin < 0 || a.page_begin + n_pages > static_cast<int64_t>(kv.pages.size()))
      fail(ErrorCode::kInvalidArgument,
           "{}: seqs[{}] (rows {}+{}, {} keys from page {}) outside q's {} rows or {} pages", op, i,
           a.q_begin, a.n_q, a.n_kv, a.page_begin, q.dim(0), kv.pages.size());
    if (a.n_q > 0)
      rows.emplace_back(static_cast<uintptr_t>(a.q_begin),
                        static_cast<uintptr_t>(a.q_begin + a.n_q));
  }
  need_disjoint(op, "two sequences' query rows", std::move(rows));
}

void check_split_columns(const Tensor& x, std::span<Tensor* const> parts) {
  const char* op = "split_columns";
  need_tensor(op, "x", x, 2, false);
  int64_t width = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string name = "parts[" + std::to_string(i) + "]";
    if (parts[i] == nullptr) fail(ErrorCode::kInvalidArgument, "{}: {} is null", op, name);
    need_tensor(op, name.c_str(), *parts[i], 2, false);
    need_dim(op, (name + "'s rows").c_str(), parts[i]->dim(0), x.dim(0));
    same_device(op, x, *parts[i]);
    width += parts[i]->dim(1);
  }
  need_dim(op, "the parts' columns", width, x.dim(1));
}

void check_gated_fused(const Tensor& gate_up, const Tensor& out) {
  const char* op = "gated_activation_fused";
  need_tensor(op, "gate_up", gate_up, 2, false);
  need_tensor(op, "out", out, 2, true);
  need_dim(op, "out rows", out.dim(0), gate_up.dim(0));
  need_dim(op, "gate_up columns", gate_up.dim(1), 2 * out.dim(1));
  same_device(op, gate_up, out);
  if (out.dim(0) > 0 && out.dim(1) > 0)
    need_disjoint(op, "gate_up and out", {bytes_of(gate_up), bytes_of(out)});
}

// q, k, v [n, heads, head_dim] f32 (k and v alike), qkv [n, their columns] f32, one device,
// the four disjoint; then rope's checks on q and k.
void check_split_rope(const Tensor& qkv, std::span<const int32_t> positions, const RopeParams& p,
                      const Tensor& q, const Tensor& k, const Tensor& v, const HeadNorms& norms) {
  const char* op = "split_rope";
  need_tensor(op, "qkv", qkv, 2, false);
  need_tensor(op, "q", q, 3, false);
  need_tensor(op, "k", k, 3, false);
  need_tensor(op, "v", v, 3, false);
  if (!(k.shape() == v.shape()))
    fail(ErrorCode::kInvalidArgument, "{}: k {} and v {} differ", op, k.describe(), v.describe());
  need_dim(op, "k's head_dim", k.dim(2), q.dim(2));
  need_dim(op, "q rows", q.dim(0), qkv.dim(0));
  need_dim(op, "k rows", k.dim(0), qkv.dim(0));
  need_dim(op, "qkv columns", qkv.dim(1), (q.dim(1) + 2 * k.dim(1)) * q.dim(2));
  for (const Tensor* t : {&q, &k, &v}) same_device(op, qkv, *t);
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (const Tensor* t : {&qkv, &q, &k, &v})
    if (t->nbytes() > 0) ranges.push_back(bytes_of(*t));
  need_disjoint(op, "qkv, q, k and v", std::move(ranges));
  check_rope(q, positions, p);
  check_rope(k, positions, p);
  for (const Tensor* w : {norms.q, norms.k}) {
    if (w == nullptr) continue;
    need_tensor(op, "a head norm's weights", *w, 1, false);
    need_dim(op, "a head norm's weights", w->dim(0), q.dim(2));
    same_device(op, qkv, *w);
  }
}

void check_same_f32(const char* op, const Tensor& a, const Tensor& b) {
  need_pair(op, a, b, false);
}

void check_output(const char* op, const Tensor& in, const Tensor& out) {
  need_pair(op, in, out, true);
  if (out.dtype() == DType::kF32 || out.nbytes() == 0 || in.nbytes() == 0) return;
  need_disjoint(op, "a rounded output and its input", {bytes_of(in), bytes_of(out)});
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

void check_convert_rows(std::span<const RowCopy> copies) {
  for (size_t i = 0; i < copies.size(); ++i) check_copy(copies, i);
  need_disjoint_dst("convert_rows", copies);
}

void check_kv_row_quant(const char* op, const KvRowQuant& q, int64_t head_dim) {
  if (q.bits != 4 && q.bits != 8)
    fail(ErrorCode::kInvalidArgument, "{}: kv_quant bits must be 4 or 8 (got {})", op, q.bits);
  if (q.group_size != 32 && q.group_size != 64 && q.group_size != 128)
    fail(ErrorCode::kInvalidArgument, "{}: kv_quant group_size must be 32, 64 or 128 (got {})", op,
         q.group_size);
  if (head_dim <= 0 || head_dim % q.group_size != 0)
    fail(ErrorCode::kInvalidArgument, "{}: kv_quant group_size {} does not divide head_dim {}", op,
         q.group_size, head_dim);
}

void check_quantize_rows(std::span<const RowCopy> copies, const KvRowQuant& q) {
  if (copies.empty()) check_kv_row_quant("quantize_rows", q, q.group_size);  // no head_dim yet
  for (size_t i = 0; i < copies.size(); ++i) check_quantize_copy(copies, i, q);
  need_disjoint_dst("quantize_rows", copies);
}

}  // namespace cairn::ops
