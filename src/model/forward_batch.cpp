#include "model/forward_batch.h"

namespace cairn {

std::vector<int64_t> ForwardBatch::logit_rows() const {
  std::vector<int64_t> rows;
  for (const SeqSpan& s : spans)
    if (s.want_logits && s.n_tokens > 0) rows.push_back(s.token_begin + s.n_tokens - 1);
  return rows;
}

}  // namespace cairn
