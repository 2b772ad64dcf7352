// GPT-2's byte-level alphabet: each of the 256 bytes is shown as a printable
// Unicode character so that byte strings can live in a JSON vocabulary.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace cairn::tok {

// The UTF-8 text of the character standing for byte b.
const std::string& byte_level_char(uint8_t b);
// Maps byte-level text back to raw bytes; characters outside the alphabet are
// kept as their UTF-8 bytes.
std::string byte_level_decode(std::string_view text);
// Maps raw bytes to byte-level text.
std::string byte_level_encode(std::string_view bytes);

}  // namespace cairn::tok
