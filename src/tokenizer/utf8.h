// UTF-8 helpers shared by the tokenizer: character lengths, code point
// encoding/decoding, and the lossy repair that turns arbitrary bytes into valid
// UTF-8 the way Rust's from_utf8_lossy does (one U+FFFD per maximal invalid subpart).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cairn::tok {

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// Length of the UTF-8 sequence a lead byte announces (1 for invalid lead bytes).
inline size_t utf8_char_len(uint8_t lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// Appends the UTF-8 encoding of a code point (U+FFFD for surrogates / out of range).
void append_utf8(uint32_t cp, std::string& out);

// Decodes one well-formed character at text[pos]; on malformed input returns
// U+FFFD and advances by the maximal invalid subpart (at least one byte).
uint32_t next_code_point(std::string_view text, size_t& pos);

// Length of the longest valid UTF-8 prefix structure starting at text[pos]:
// returns n > 0 for a complete valid character, 0 when text ends inside a valid
// but incomplete character, and -k when the k bytes at pos are an invalid subpart.
int utf8_scan(std::string_view text, size_t pos);

// Appends bytes to out as valid UTF-8, replacing invalid subparts with U+FFFD.
// When `final` is false, a trailing incomplete (but so far valid) character is
// not consumed; returns the number of input bytes consumed.
size_t append_utf8_lossy(std::string_view bytes, bool final, std::string& out);

// True when text is entirely valid UTF-8.
bool is_valid_utf8(std::string_view text);

}  // namespace cairn::tok
