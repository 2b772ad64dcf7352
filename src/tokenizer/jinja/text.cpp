#include "tokenizer/jinja/text.h"

#include <utf8proc.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace cairn::jinja {

char32_t decode_utf8(std::string_view s, size_t& pos) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(s.data() + pos);
  utf8proc_int32_t cp = 0;
  utf8proc_ssize_t n = utf8proc_iterate(bytes, static_cast<utf8proc_ssize_t>(s.size() - pos), &cp);
  if (n <= 0) {
    ++pos;
    return 0xFFFD;
  }
  pos += static_cast<size_t>(n);
  return static_cast<char32_t>(cp);
}

void append_utf8(std::string& out, char32_t cp) {
  utf8proc_uint8_t buf[4];
  if (!utf8proc_codepoint_valid(static_cast<utf8proc_int32_t>(cp))) cp = 0xFFFD;
  utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

std::vector<std::string> split_code_points(std::string_view s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t start = pos;
    decode_utf8(s, pos);
    out.emplace_back(s.substr(start, pos - start));
  }
  return out;
}

size_t count_code_points(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool is_js_space(char32_t cp) {
  if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D)) return true;
  if (cp < 0x80) return false;
  return cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

std::string trim_start(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t next = pos;
    if (!is_js_space(decode_utf8(s, next))) break;
    pos = next;
  }
  return std::string(s.substr(pos));
}

std::string trim_end(std::string_view s) {
  size_t end = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    char32_t cp = decode_utf8(s, pos);
    if (!is_js_space(cp)) end = pos;
  }
  return std::string(s.substr(0, end));
}

std::string trim(std::string_view s) {
  return trim_end(trim_start(s));
}

namespace {

template <typename Map>
std::string map_case(std::string_view s, Map map) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) {
    if (static_cast<unsigned char>(s[pos]) < 0x80) {
      out += static_cast<char>(map(static_cast<unsigned char>(s[pos++])));
      continue;
    }
    append_utf8(out, static_cast<char32_t>(map(static_cast<int32_t>(decode_utf8(s, pos)))));
  }
  return out;
}

}  // namespace

std::string to_upper(std::string_view s) {
  // Full case mappings that expand (ß -> SS) are applied before the 1:1 mapping.
  std::string expanded;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t start = pos;
    char32_t cp = decode_utf8(s, pos);
    if (cp == 0xDF)
      expanded.append(2, 'S');
    else
      expanded.append(s.substr(start, pos - start));
  }
  return map_case(expanded, [](int32_t c) { return utf8proc_toupper(c); });
}

std::string to_lower(std::string_view s) {
  return map_case(s, [](int32_t c) { return utf8proc_tolower(c); });
}

std::string js_number_text(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == 0) return "0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  size_t e_pos = sci.find('e');
  int exponent = std::atoi(sci.c_str() + e_pos + 1);
  std::string digits = sci.substr(0, e_pos);
  if (digits.size() > 1) digits.erase(1, 1);  // drop the decimal point
  int k = static_cast<int>(digits.size());
  int n = exponent + 1;  // value = 0.digits * 10^n
  if (k <= n && n <= 21) return sign + digits + std::string(static_cast<size_t>(n - k), '0');
  if (0 < n && n <= 21) return sign + digits.substr(0, n) + "." + digits.substr(n);
  if (-6 < n && n <= 0) return sign + "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  std::string exp_text = (n - 1 >= 0 ? "+" : "-") + std::to_string(std::abs(n - 1));
  if (k == 1) return sign + digits + "e" + exp_text;
  return sign + digits.substr(0, 1) + "." + digits.substr(1) + "e" + exp_text;
}

std::string float_text(double d) {
  if (d == 0 && std::signbit(d)) return "-0.0";
  if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 1e21) {
    char buf[400];
    std::snprintf(buf, sizeof(buf), "%.1f", d);
    return buf;
  }
  return js_number_text(d);
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", u);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

namespace {

size_t skip_js_space(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t next = pos;
    if (!is_js_space(decode_utf8(s, next))) break;
    pos = next;
  }
  return pos;
}

size_t count_digits(std::string_view s, size_t pos) {
  size_t n = 0;
  while (pos + n < s.size() && s[pos + n] >= '0' && s[pos + n] <= '9') ++n;
  return n;
}

}  // namespace

bool parse_int_prefix(std::string_view s, double& out) {
  size_t pos = skip_js_space(s);
  size_t start = pos;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) ++pos;
  size_t n = count_digits(s, pos);
  if (n == 0) return false;
  std::string text(s.substr(start, pos + n - start));
  out = std::strtod(text.c_str(), nullptr);
  return true;
}

bool parse_float_prefix(std::string_view s, double& out) {
  size_t pos = skip_js_space(s);
  size_t start = pos;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) ++pos;
  if (s.substr(pos, 8) == "Infinity") {
    out = s[start] == '-' ? -INFINITY : INFINITY;
    return true;
  }
  size_t n_int = count_digits(s, pos);
  pos += n_int;
  size_t n_frac = 0;
  if (pos < s.size() && s[pos] == '.') {
    n_frac = count_digits(s, pos + 1);
    if (n_int > 0 || n_frac > 0) pos += 1 + n_frac;
  }
  if (n_int == 0 && n_frac == 0) return false;
  if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
    size_t p = pos + 1;
    if (p < s.size() && (s[p] == '+' || s[p] == '-')) ++p;
    size_t n_exp = count_digits(s, p);
    if (n_exp > 0) pos = p + n_exp;
  }
  std::string text(s.substr(start, pos - start));
  out = std::strtod(text.c_str(), nullptr);
  return true;
}

}  // namespace cairn::jinja
