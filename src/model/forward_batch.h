// One forward step's input: a flat, ragged batch of tokens from one or more
// sequences (DESIGN.md decision 2). No padding: sequence s owns the token rows
// [spans[s].token_begin, spans[s].token_begin + spans[s].n_tokens).
#pragma once

#include <cstdint>
#include <vector>

namespace cairn {

struct SeqSpan {
  int32_t seq_slot = 0;     // which sequence of the KvView these tokens belong to
  int64_t token_begin = 0;  // first row in ForwardBatch::tokens
  int64_t n_tokens = 0;     // rows of this sequence in the batch
  bool want_logits = true;  // compute logits for this sequence's last row
};

struct ForwardBatch {
  std::vector<int32_t> tokens;     // [n_tokens]
  std::vector<int32_t> positions;  // [n_tokens], absolute positions within each sequence
  std::vector<SeqSpan> spans;      // [n_seqs], in row order, covering every row once

  int64_t n_tokens() const { return static_cast<int64_t>(tokens.size()); }
  // Rows whose logits the caller wants, in span order (one per span with want_logits).
  std::vector<int64_t> logit_rows() const;
};

}  // namespace cairn
