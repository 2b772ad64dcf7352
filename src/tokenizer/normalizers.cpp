#include "tokenizer/normalizers.h"

#include <utf8proc.h>

#include <cstdlib>

#include "tokenizer/utf8.h"

namespace cairn::tok {

void PrependNormalizer::apply(std::string& text) const {
  if (!text.empty()) text.insert(0, prefix_);
}

void ReplaceNormalizer::apply(std::string& text) const {
  if (from_.empty() || text.find(from_) == std::string::npos) return;
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  size_t pos = 0;
  for (size_t hit; (hit = text.find(from_, pos)) != std::string::npos; pos = hit + from_.size()) {
    out.append(text, pos, hit - pos);
    out.append(to_);
  }
  out.append(text, pos, std::string::npos);
  text.swap(out);
}

void RegexReplaceNormalizer::apply(std::string& text) const {
  std::vector<std::pair<uint32_t, uint32_t>> matches;
  regex_->find_all(text, 0, static_cast<uint32_t>(text.size()), matches);
  if (matches.empty()) return;
  std::string out;
  uint32_t pos = 0;
  for (auto [begin, end] : matches) {
    out.append(text, pos, begin - pos);
    out.append(to_);
    pos = end;
  }
  out.append(text, pos, std::string::npos);
  text.swap(out);
}

namespace {

// Normalizes one piece of valid UTF-8 with utf8proc.
void append_normalized(std::string_view piece, int options, std::string& out) {
  utf8proc_uint8_t* result = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(piece.data()),
                              static_cast<utf8proc_ssize_t>(piece.size()), &result,
                              static_cast<utf8proc_option_t>(options));
  if (n >= 0 && result) {
    out.append(reinterpret_cast<const char*>(result), static_cast<size_t>(n));
  } else {
    out.append(piece);
  }
  std::free(result);
}

}  // namespace

void UnicodeNormalizer::apply(std::string& text) const {
  if (!is_valid_utf8(text)) {
    std::string repaired;
    append_utf8_lossy(text, true, repaired);
    text.swap(repaired);
  }
  int options = UTF8PROC_STABLE;
  switch (form_) {
    case UnicodeForm::kNfc:
      options |= UTF8PROC_COMPOSE;
      break;
    case UnicodeForm::kNfd:
      options |= UTF8PROC_DECOMPOSE;
      break;
    case UnicodeForm::kNfkc:
      options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
      break;
    case UnicodeForm::kNfkd:
      options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
      break;
  }
  // ASCII is left alone by every form and never combines with what precedes it,
  // so only runs of non-ASCII (with the one character before, a possible base)
  // go through utf8proc.
  std::string out;
  size_t copied = 0, pos = 0;
  while (pos < text.size()) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    size_t begin = pos;
    if (begin > copied) --begin;  // the ASCII character before: a possible base
    size_t end = pos;
    while (end < text.size() && static_cast<unsigned char>(text[end]) >= 0x80) ++end;
    if (out.empty()) out.reserve(text.size() + 16);
    out.append(text, copied, begin - copied);
    append_normalized(std::string_view(text).substr(begin, end - begin), options, out);
    copied = pos = end;
  }
  if (copied == 0) return;  // pure ASCII
  out.append(text, copied, std::string::npos);
  text.swap(out);
}

void LowercaseNormalizer::apply(std::string& text) const {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const auto c = static_cast<unsigned char>(text[pos]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
      ++pos;
      continue;
    }
    append_utf8(static_cast<uint32_t>(
                    utf8proc_tolower(static_cast<utf8proc_int32_t>(next_code_point(text, pos)))),
                out);
  }
  text.swap(out);
}

namespace {

bool is_unicode_space(uint32_t cp) {
  if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85) return true;
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return category == UTF8PROC_CATEGORY_ZS || category == UTF8PROC_CATEGORY_ZL ||
         category == UTF8PROC_CATEGORY_ZP;
}

}  // namespace

void StripNormalizer::apply(std::string& text) const {
  size_t begin = 0, end = text.size();
  if (left_) {
    while (begin < end) {
      size_t next = begin;
      if (!is_unicode_space(next_code_point(text, next))) break;
      begin = next;
    }
  }
  if (right_) {
    while (end > begin) {
      size_t start = end - 1;
      while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
      size_t next = start;
      if (!is_unicode_space(next_code_point(text, next)) || next != end) break;
      end = start;
    }
  }
  text = text.substr(begin, end - begin);
}

void SequenceNormalizer::apply(std::string& text) const {
  for (const auto& step : steps_) step->apply(text);
}

}  // namespace cairn::tok
