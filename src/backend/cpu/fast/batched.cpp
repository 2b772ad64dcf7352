// attention_seqs and convert_rows of the fast table: one call of this
// table's single-sequence op per sequence or row block.
#include "backend/cpu/fast/fast.h"
#include "backend/cpu/seq_loops.h"

namespace cairn::ops::fast {

void attention_seqs(const Tensor& q, std::span<const AttentionSeq> seqs,
                    std::span<const int32_t> q_positions, const AttentionParams& p, Tensor& out) {
  cpu::attention_seqs_loop<&attention>(q, seqs, q_positions, p, out);
}

void convert_rows(std::span<const RowCopy> copies) {
  cpu::convert_rows_loop<&convert>(copies);
}

}  // namespace cairn::ops::fast
