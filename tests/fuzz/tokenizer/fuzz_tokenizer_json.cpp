// tokenizer.json loading: any input is either a tokenizer or a cairn::Error.
// Loaded tokenizers also encode and decode a fixed text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "tokenizer/loaders.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    cairn::tok::Tokenizer tok(cairn::tok::load_hf_text(text, "fuzz.json"));
    const auto ids = tok.encode("Hello wörld <s> 123 \xF0\x9F\x98\x80", {.parse_special = true});
    (void)tok.decode(ids);
  } catch (const cairn::Error&) {
  }
  return 0;
}
