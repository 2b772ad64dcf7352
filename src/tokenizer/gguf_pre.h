// What a GGUF `tokenizer.ggml.pre` name means: the split regexes applied in
// turn (each keeps matches and gaps as words), whether bytes are mapped to
// GPT-2's alphabet, and the flags that go with the name.
#pragma once

#include <string>
#include <vector>

namespace cairn::tok {

struct GgufPre {
  std::vector<std::string> patterns;
  bool byte_level = true;      // false: raw UTF-8 with "<0xXX>" byte fallback
  bool ignore_merges = false;  // a word that is a token is emitted whole
  bool escape_spaces = false;  // ' ' becomes "▁" before splitting
  bool add_bos = false;        // default for tokenizer.ggml.add_bos_token
};

// Throws Error(kUnsupported) naming `path` and the pre-tokenizer when unknown.
GgufPre gguf_pre_config(const std::string& pre, const std::string& path);

}  // namespace cairn::tok
