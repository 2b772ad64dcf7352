// The affine row codec shared by the paged KV (kv/row_codec) and the backends'
// quantize_rows / quantized attention_seqs (ops::KvRowQuant). One head row of
// d elements: codes [d · bits / 8] (4-bit: two per byte, low nibble first),
// then f16 scales [d / gs], then f16 biases [d / gs]. Per group of gs elements:
// bias = the largest f16 ≤ min, scale = the smallest f16 ≥ (max − bias) / (2^bits − 1),
// code = round-half-even((x − bias) / scale) clamped to [0, 2^bits − 1] (0 when
// scale is 0); a value decodes as code · scale + bias (f32 multiply, then add),
// so |x − x̂| ≤ scale / 2 up to f32 rounding.
#pragma once

#include <cstdint>

namespace cairn {

// Largest f16 ≤ x (x finite); saturates at ±65504.
uint16_t f16_at_most(float x);
// Smallest f16 ≥ x, for x ≥ 0; saturates at 65504.
uint16_t f16_at_least(float x);

// x [d] f32 → dst [d · bits / 8 + 4 · (d / gs)] bytes. bits 4 or 8; gs divides d.
void encode_affine(const float* x, int64_t d, int bits, int gs, uint8_t* dst);
// src (encode_affine's bytes) → y [d] f32.
void decode_affine(const uint8_t* src, int64_t d, int bits, int gs, float* y);

}  // namespace cairn
