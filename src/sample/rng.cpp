#include "sample/rng.h"

#include "backend/philox.h"

namespace cairn {

std::array<uint32_t, 4> philox4x32(uint64_t seed, uint64_t step, uint64_t lane) {
  const PhiloxWords p = philox_words(seed, step, lane);
  return {p.w[0], p.w[1], p.w[2], p.w[3]};
}

float uniform_at(uint64_t seed, uint64_t step, uint64_t lane) {
  return philox_uniform(seed, step, lane);
}

}  // namespace cairn
