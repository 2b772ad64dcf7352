// The CPU entry of ops::sample_rows: each row through the reference sampling of
// backend/sample_row.h, in place, one after another.
#include <algorithm>

#include "backend/cpu/reference/reference.h"
#include "backend/sample_row.h"

namespace cairn::ops::ref {

void sample_rows(Tensor& logits, std::span<const SampleRow> rows, const SampleOutputs& out) {
  const int64_t vocab = logits.dim(1);
  const int64_t width = out.top_ids ? out.top_ids->dim(1) : 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::span<float> row(logits.data<float>() + static_cast<int64_t>(i) * vocab,
                         static_cast<size_t>(vocab));
    apply_row_processors(row, rows[i]);
    const RowSample r = sample_row(row, rows[i]);
    out.ids->data<int32_t>()[i] = r.id;
    out.logprobs->data<float>()[i] = r.logprob;
    if (width == 0) continue;
    int32_t* top_ids = out.top_ids->data<int32_t>() + static_cast<int64_t>(i) * width;
    float* top_lp = out.top_logprobs->data<float>() + static_cast<int64_t>(i) * width;
    std::fill(top_ids, top_ids + width, -1);
    std::fill(top_lp, top_lp + width, 0.0f);
    for (size_t k = 0; k < r.top.size(); ++k)
      top_ids[k] = r.top[k].id, top_lp[k] = r.top[k].logprob;
  }
}

}  // namespace cairn::ops::ref
