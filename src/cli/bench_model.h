// Random-weight models of named real shapes for `cairn bench`: written as an HF
// folder (config.json + model.safetensors) so the benchmark loads them through
// the same path as any model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace cairn {

struct BenchShape {
  std::string name;  // "0.5b", "1.5b", "tiny"
  int64_t hidden = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, ffn = 0, vocab = 0;
  bool tied = true;
  int64_t n_params() const;
};

const std::vector<BenchShape>& bench_shapes();
const BenchShape& find_bench_shape(const std::string& name);  // Error listing the names

// Writes config.json and model.safetensors of a llama-family model with weights
// drawn uniformly from ±0.5/sqrt(fan_in) (norms 1) into `dir` (created).
void write_random_model(const BenchShape& shape, DType dtype, const std::string& dir,
                        uint64_t seed);

}  // namespace cairn
