// ops::split_columns on the CPU (both tables): each part's columns copied row by row.
#pragma once

#include <span>

#include "backend/ops.h"

namespace cairn::ops::cpu {

// Arguments checked (check_split_columns).
void split_columns(const Tensor& x, std::span<Tensor* const> parts);

}  // namespace cairn::ops::cpu
