// Counter-based random numbers (Philox4x32-10): the sampling layer's names for
// backend/philox.h, which the host and the CUDA sampler share. A draw is a pure
// function of (seed, step, lane): no state is carried between tokens, so a
// request's samples never depend on what else ran, on batching or on a restart
// (DESIGN.md decision 7).
#pragma once

#include <array>
#include <cstdint>

namespace cairn {

// Four 32-bit words for counter (step, lane) under key seed.
std::array<uint32_t, 4> philox4x32(uint64_t seed, uint64_t step, uint64_t lane = 0);

// A float uniform in [0, 1) with 24 random bits, from word 0 of philox4x32.
float uniform_at(uint64_t seed, uint64_t step, uint64_t lane = 0);

}  // namespace cairn
