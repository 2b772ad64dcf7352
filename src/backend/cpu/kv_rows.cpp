#include "backend/cpu/kv_rows.h"

#include "core/affine_row.h"

namespace cairn::ops::cpu {

void quantize_rows(std::span<const RowCopy> copies, const KvRowQuant& q) {
  for (const RowCopy& c : copies) {
    if (c.n_rows == 0) continue;
    const int64_t head_dim = c.src->dim(2);
    const int64_t heads = c.n_rows * c.src->dim(1);  // head rows in the block
    const int64_t row_bytes = q.row_bytes(head_dim);
    const float* x = c.src->data<float>() + c.src_row * c.src->dim(1) * head_dim;
    uint8_t* dst = c.dst->data<uint8_t>() + c.dst_row * c.dst->dim(1) * row_bytes;
    for (int64_t i = 0; i < heads; ++i)
      encode_affine(x + i * head_dim, head_dim, q.bits, q.group_size, dst + i * row_bytes);
  }
}

Tensor decode_rows(const Tensor& rows, int64_t n_rows, int64_t head_dim, const KvRowQuant& q) {
  const int64_t n_kv_heads = rows.dim(1);
  Tensor out = Tensor::empty({n_rows, n_kv_heads, head_dim}, DType::kF32);
  const int64_t row_bytes = q.row_bytes(head_dim);
  const uint8_t* src = rows.data<uint8_t>();
  float* y = out.data<float>();
  for (int64_t i = 0; i < n_rows * n_kv_heads; ++i)
    decode_affine(src + i * row_bytes, head_dim, q.bits, q.group_size, y + i * head_dim);
  return out;
}

}  // namespace cairn::ops::cpu
