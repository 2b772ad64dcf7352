// The reference sampling of one row on the host (ops.h's SampleRow): the CPU
// entry of ops::sample_rows runs it for each row, and src/sample's
// apply_processors and sample are built on it, so the CPU engine, `cairn
// generate` on the CPU and the op share one arithmetic. The CUDA entry is
// tested against it (tests/gpu/ops/sample_rows_test.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/ops.h"

namespace cairn::ops {

struct TopLogprob {
  int32_t id = 0;
  float logprob = 0.0f;
};

struct RowSample {
  int32_t id = 0;
  float logprob = 0.0f;         // 0 when n_top < 0
  std::vector<TopLogprob> top;  // min(n_top, kept) entries, best first
};

// The row's processors, in place, in SampleRow's order (f32 arithmetic, one
// operation at a time: l + bias, l / p or l * p, l − (frequency · count + presence)).
void apply_row_processors(std::span<float> logits, const SampleRow& row);

// The sampling chain over processed logits (the processors are not applied):
// sorting by logit / temperature (f32) descending, ties by id; probabilities,
// the top-p and min-p cuts and the inverse CDF in double.
RowSample sample_row(std::span<const float> logits, const SampleRow& row);

}  // namespace cairn::ops
