// Affine-quantized K/V rows on the CPU (ops::KvRowQuant): the quantize_rows
// entry of both CPU tables, and the decoding attention_seqs uses before it
// runs its f32 path over a sequence's rows. Rows are core/affine_row.h's
// encoding of each head row, so the bytes equal the paged KV's.
#pragma once

#include <span>

#include "backend/ops.h"

namespace cairn::ops::cpu {

// ops::quantize_rows; arguments checked (check_quantize_rows).
void quantize_rows(std::span<const RowCopy> copies, const KvRowQuant& q);

// Rows [0, n_rows) of u8 rows [>= n_rows, n_kv_heads, q.row_bytes(head_dim)] decoded into
// a new f32 tensor [n_rows, n_kv_heads, head_dim].
Tensor decode_rows(const Tensor& rows, int64_t n_rows, int64_t head_dim, const KvRowQuant& q);

}  // namespace cairn::ops::cpu
