// Any byte string given to the safetensors header parser either parses into
// entries that lie inside the data, or is rejected with cairn::Error: never a
// crash, a hang or an out-of-bounds read.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto entries = cairn::io::parse_safetensors_header(data, size, "fuzz.safetensors");
    for (const auto& e : entries) {
      if (e.offset_bytes + e.size_bytes > size) __builtin_trap();  // the parser's promise
      volatile uint8_t sink = 0;
      if (e.size_bytes > 0) sink = data[e.offset_bytes + e.size_bytes - 1];
      (void)sink;
    }
  } catch (const cairn::Error&) {
  }
  return 0;
}
