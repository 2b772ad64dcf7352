#include "tokenizer/jinja/preprocess.h"

namespace cairn::jinja {

namespace {

bool is_ascii_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

// lstrip_blocks: blanks at the start of a line go when a block or comment follows.
Mapped strip_block_indent(const Mapped& in) {
  Mapped out;
  const std::string& s = in.text;
  for (size_t i = 0; i < s.size();) {
    bool line_start = i == 0 || s[i - 1] == '\n' || s[i - 1] == '\r';
    if (line_start) {
      size_t j = i;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      if (j + 1 < s.size() && s[j] == '{' &&
          (s[j + 1] == '#' || s[j + 1] == '%' || s[j + 1] == '-'))
        i = j;
    }
    size_t end = i;
    do {
      out.push(s[end], in.origin[end]);
      ++end;
    } while (end < s.size() && s[end - 1] != '\n' && s[end - 1] != '\r');
    i = end;
  }
  return out;
}

// trim_blocks: the newline right after a block or comment goes.
Mapped trim_block_newline(const Mapped& in) {
  Mapped out;
  const std::string& s = in.text;
  for (size_t i = 0; i < s.size();) {
    if (i + 2 < s.size() && (s[i] == '#' || s[i] == '%' || s[i] == '-') && s[i + 1] == '}' &&
        s[i + 2] == '\n') {
      out.push(s[i], in.origin[i]);
      out.push(s[i + 1], in.origin[i + 1]);
      i += 3;
      continue;
    }
    out.push(s[i], in.origin[i]);
    ++i;
  }
  return out;
}

// Matches `{%-? generation|endgeneration -?%}` at i; returns the end or 0.
size_t match_generation_tag(const std::string& s, size_t i, bool& strip_before, bool& strip_after) {
  if (s.compare(i, 2, "{%") != 0) return 0;
  size_t j = i + 2;
  strip_before = j < s.size() && s[j] == '-';
  if (strip_before) ++j;
  while (j < s.size() && is_ascii_space(s[j])) ++j;
  if (s.compare(j, 3, "end") == 0 && s.compare(j + 3, 10, "generation") == 0) j += 3;
  if (s.compare(j, 10, "generation") != 0) return 0;
  j += 10;
  while (j < s.size() && is_ascii_space(s[j])) ++j;
  strip_after = j < s.size() && s[j] == '-';
  if (strip_after) ++j;
  if (s.compare(j, 2, "%}") != 0) return 0;
  return j + 2;
}

// {% generation %} marks assistant spans for training; rendering drops the tags.
Mapped drop_generation_tags(const Mapped& in) {
  Mapped out;
  const std::string& s = in.text;
  size_t protected_len = 0;  // output bytes before the last removed tag
  for (size_t i = 0; i < s.size();) {
    bool strip_before = false, strip_after = false;
    size_t end = s[i] == '{' ? match_generation_tag(s, i, strip_before, strip_after) : 0;
    if (end == 0) {
      out.push(s[i], in.origin[i]);
      ++i;
      continue;
    }
    if (strip_before) {
      while (out.text.size() > protected_len && is_ascii_space(out.text.back())) {
        out.text.pop_back();
        out.origin.pop_back();
      }
    }
    // The tag's trailing whitespace belongs to this match: kept or dropped,
    // it cannot be stripped by a following tag's `{%-`.
    for (i = end; i < s.size() && is_ascii_space(s[i]); ++i) {
      if (!strip_after) out.push(s[i], in.origin[i]);
    }
    protected_len = out.text.size();
  }
  return out;
}

}  // namespace

Mapped preprocess(std::string_view source, const LexOptions& options) {
  Mapped m;
  size_t n = source.size();
  if (n > 0 && source[n - 1] == '\n') --n;
  for (size_t i = 0; i < n; ++i) m.push(source[i], static_cast<uint32_t>(i));
  if (options.lstrip_blocks) m = strip_block_indent(m);
  if (options.trim_blocks) m = trim_block_newline(m);
  return drop_generation_tags(m);
}

}  // namespace cairn::jinja
