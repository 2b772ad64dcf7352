// UTF-8 and number-text helpers shared by the lexer, filters and methods.
// Strings are UTF-8; character positions (indexing, slicing, length) count
// code points.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::jinja {

// Decodes one code point at `pos`, advancing it; invalid bytes decode as U+FFFD.
char32_t decode_utf8(std::string_view s, size_t& pos);
void append_utf8(std::string& out, char32_t cp);
std::vector<std::string> split_code_points(std::string_view s);
size_t count_code_points(std::string_view s);

// JavaScript's notion of whitespace (String.prototype.trim, /\s/).
bool is_js_space(char32_t cp);
std::string trim_start(std::string_view s);
std::string trim_end(std::string_view s);
std::string trim(std::string_view s);

// Case mapping per code point.
std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);

// A number as JavaScript's String(n) writes it ("1e+21", "0.1", "NaN").
std::string js_number_text(double d);
// A float as the template prints it: integral values keep one decimal ("3.0").
std::string float_text(double d);
// A string as a JSON literal: ", \ and control characters escaped, the rest kept.
std::string json_quote(std::string_view s);

// JavaScript parseInt(s, 10) / parseFloat(s); false when no number is found.
bool parse_int_prefix(std::string_view s, double& out);
bool parse_float_prefix(std::string_view s, double& out);

}  // namespace cairn::jinja
