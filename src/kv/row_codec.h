// Encoding and decoding of one head row (head_dim elements) in a LayerFormat;
// affine rows through core/affine_row.h.
// Affine rows: per group of g elements along head_dim, bias = the largest f16
// ≤ min, scale = the smallest f16 ≥ (max - bias) / (2^bits - 1), code =
// round((x - bias) / scale) clamped to [0, 2^bits - 1]; so |x - x̂| ≤ scale / 2
// (up to f32 rounding). 4-bit codes pack two per byte, low nibble first.
#pragma once

#include <cstdint>

#include "kv/kv_format.h"

namespace cairn {

// dst holds f.row_bytes(head_dim) bytes; x [head_dim] f32.
void encode_row(const float* x, int64_t head_dim, const LayerFormat& f, uint8_t* dst);

// y [head_dim] f32 from a row stored in format f.
void decode_row(const uint8_t* src, int64_t head_dim, const LayerFormat& f, float* y);

}  // namespace cairn
