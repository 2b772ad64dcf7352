// GGUF parsing and vocabulary loading from arbitrary bytes: a tokenizer or a
// cairn::Error, never a crash.
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/error.h"
#include "io/gguf.h"
#include "tokenizer/loaders.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto file = cairn::io::GgufFile::parse(std::span<const uint8_t>(data, size), "fuzz.gguf");
    cairn::tok::Tokenizer tok(cairn::tok::load_gguf_vocab(*file));
    const auto ids = tok.encode("Hello world <s> 123", {.parse_special = true});
    (void)tok.decode(ids);
  } catch (const cairn::Error&) {
  }
  return 0;
}
