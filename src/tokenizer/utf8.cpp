#include "tokenizer/utf8.h"

namespace cairn::tok {

void append_utf8(uint32_t cp, std::string& out) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int utf8_scan(std::string_view text, size_t pos) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  const uint8_t b0 = s[pos];
  if (b0 < 0x80) return 1;
  int len = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // the valid range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return -1;
  }
  for (int i = 1; i < len; ++i) {
    if (pos + i >= n) return 0;
    const uint8_t b = s[pos + i];
    const uint8_t l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
    if (b < l || b > h) return -i;
  }
  return len;
}

uint32_t next_code_point(std::string_view text, size_t& pos) {
  const int r = utf8_scan(text, pos);
  const auto* s = reinterpret_cast<const uint8_t*>(text.data()) + pos;
  if (r <= 0) {
    pos += r == 0 ? text.size() - pos : static_cast<size_t>(-r);
    return 0xFFFD;
  }
  pos += static_cast<size_t>(r);
  switch (r) {
    case 1:
      return s[0];
    case 2:
      return ((s[0] & 0x1Fu) << 6) | (s[1] & 0x3Fu);
    case 3:
      return ((s[0] & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
    default:
      return ((s[0] & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) |
             (s[3] & 0x3Fu);
  }
}

size_t append_utf8_lossy(std::string_view bytes, bool final, std::string& out) {
  size_t pos = 0, run_begin = 0;  // [run_begin, pos) is valid and not yet copied
  while (pos < bytes.size()) {
    if (static_cast<uint8_t>(bytes[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const int r = utf8_scan(bytes, pos);
    if (r > 0) {
      pos += static_cast<size_t>(r);
      continue;
    }
    out.append(bytes.data() + run_begin, pos - run_begin);
    if (r == 0 && !final) return pos;  // hold back an incomplete character
    out.append(kReplacementChar);
    pos += r == 0 ? bytes.size() - pos : static_cast<size_t>(-r);
    run_begin = pos;
  }
  out.append(bytes.data() + run_begin, pos - run_begin);
  return pos;
}

bool is_valid_utf8(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    if (static_cast<uint8_t>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const int r = utf8_scan(text, pos);
    if (r <= 0) return false;
    pos += static_cast<size_t>(r);
  }
  return true;
}

}  // namespace cairn::tok
