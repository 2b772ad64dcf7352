#include "tokenizer/byte_level.h"

#include <unordered_map>

#include "tokenizer/utf8.h"

namespace cairn::tok {
namespace {

struct Tables {
  std::array<std::string, 256> chars;
  std::unordered_map<uint32_t, uint8_t> bytes;  // code point → byte
  Tables() {
    uint32_t next = 256;  // bytes that are not printable get U+0100 onwards, in order
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
      const uint32_t cp = printable ? b : next++;
      append_utf8(cp, chars[b]);
      bytes[cp] = static_cast<uint8_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const std::string& byte_level_char(uint8_t b) {
  return tables().chars[b];
}

std::string byte_level_decode(std::string_view text) {
  const Tables& t = tables();
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const uint32_t cp = next_code_point(text, pos);
    auto it = t.bytes.find(cp);
    if (it != t.bytes.end()) {
      out.push_back(static_cast<char>(it->second));
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

std::string byte_level_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out.append(byte_level_char(static_cast<uint8_t>(c)));
  return out;
}

}  // namespace cairn::tok
