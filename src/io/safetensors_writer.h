// Writes a .safetensors file: an 8-byte little-endian header length, a JSON
// header (padded with spaces to a multiple of 8 bytes) giving each tensor's
// dtype, shape and byte range, then the tensors' bytes in order. Tensor data
// is produced by a callback so multi-GB files never sit whole in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace cairn {

struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::kF32;  // f32, bf16, f16, i8, u8, i32
  std::vector<int64_t> shape;
  // Fills exactly the tensor's bytes (numel × element size) at dst.
  std::function<void(uint8_t* dst, size_t n_bytes)> fill;
};

// Throws Error(kIo) naming the path when the file cannot be written.
void write_safetensors(const std::string& path, const std::vector<SafetensorsEntry>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// The dtype name safetensors uses ("F32", "BF16", ...).
const char* safetensors_dtype_name(DType t);

}  // namespace cairn
