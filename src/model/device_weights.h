// Moving a model's weights to a device: every tensor of a DecoderWeights copied
// into that device's memory in its stored dtype (a tied LM head stays one
// tensor), and random weights of a given shape made directly on a device (for
// benchmarks of real shapes without their files).
#pragma once

#include <cstdint>

#include "core/storage.h"
#include "model/decoder.h"

namespace cairn {

// A copy of `w` on `device`; waits until the copies are done.
DecoderWeights weights_on(const DecoderWeights& w, Device device);

// Weights for config `c` in `dtype` on `device`: matrices uniform in
// ±0.5/sqrt(fan_in), norms 1, no biases; q/k norms when `qk_norm`.
DecoderWeights random_weights(const ModelConfig& c, DType dtype, Device device, bool qk_norm,
                              uint64_t seed);

}  // namespace cairn
