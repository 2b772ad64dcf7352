// Counter-based random numbers (Philox4x32-10), one definition for the host
// and the device: a draw is a pure function of (seed, step, lane), so a
// request's samples never depend on what else ran, on batching or on a restart
// (DESIGN.md decision 7), and ops::sample_rows draws the same u on every
// backend. sample/rng.h is the sampling layer's name for it.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define CAIRN_PHILOX_FN __host__ __device__ inline
#else
#define CAIRN_PHILOX_FN inline
#endif

namespace cairn {

struct PhiloxWords {
  uint32_t w[4];
};

// Four 32-bit words for counter (step, lane) under key seed.
CAIRN_PHILOX_FN PhiloxWords philox_words(uint64_t seed, uint64_t step, uint64_t lane) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
  constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1
  uint32_t c0 = static_cast<uint32_t>(step), c1 = static_cast<uint32_t>(step >> 32);
  uint32_t c2 = static_cast<uint32_t>(lane), c3 = static_cast<uint32_t>(lane >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * c0, p1 = static_cast<uint64_t>(kMul1) * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0, c1 = lo1, c2 = hi0 ^ c3 ^ k1, c3 = lo0;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return {{c0, c1, c2, c3}};
}

// A float uniform in [0, 1) with 24 random bits (exact in f32), from word 0.
CAIRN_PHILOX_FN float philox_uniform(uint64_t seed, uint64_t step, uint64_t lane = 0) {
  const uint32_t bits = philox_words(seed, step, lane).w[0] >> 8;
  return static_cast<float>(bits) * (1.0f / 16777216.0f);
}

}  // namespace cairn

#undef CAIRN_PHILOX_FN
