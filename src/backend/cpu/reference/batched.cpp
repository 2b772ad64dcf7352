// attention_seqs and convert_rows of the reference table: one call of this
// table's single-sequence op per sequence or row block.
#include "backend/cpu/reference/reference.h"
#include "backend/cpu/seq_loops.h"

namespace cairn::ops::ref {

void attention_seqs(const Tensor& q, std::span<const AttentionSeq> seqs,
                    std::span<const int32_t> q_positions, const AttentionParams& p, Tensor& out) {
  cpu::attention_seqs_loop<&attention>(q, seqs, q_positions, p, out);
}

void convert_rows(std::span<const RowCopy> copies) {
  cpu::convert_rows_loop<&convert>(copies);
}

}  // namespace cairn::ops::ref
