#include "tokenizer/added_tokens.h"

#include <algorithm>

namespace cairn::tok {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool is_word_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
         u == '_';
}

}  // namespace

void AddedTokens::add(AddedToken token) {
  if (token.content.empty()) return;
  const auto first = static_cast<unsigned char>(token.content[0]);
  tokens_.push_back(std::move(token));
  // Keep the bucket ordered longest first: insert after every longer-or-equal token.
  is_first_byte_[first] = true;
  auto& bucket = by_first_byte_[first];
  const size_t length = tokens_.back().content.size();
  auto at = std::find_if(bucket.begin(), bucket.end(),
                         [&](int other) { return tokens_[other].content.size() < length; });
  bucket.insert(at, static_cast<int>(tokens_.size() - 1));
}

int AddedTokens::find_at(std::string_view text, size_t pos, bool parse_special) const {
  for (int index : by_first_byte_[static_cast<unsigned char>(text[pos])]) {
    const AddedToken& t = tokens_[index];
    if (t.special && !parse_special) continue;
    if (text.compare(pos, t.content.size(), t.content) != 0) continue;
    if (t.single_word) {
      const size_t end = pos + t.content.size();
      if (pos > 0 && is_word_byte(text[pos - 1])) continue;
      if (end < text.size() && is_word_byte(text[end])) continue;
    }
    return index;
  }
  return -1;
}

void AddedTokens::split(std::string_view text, bool parse_special,
                        std::vector<Segment>& out) const {
  if (tokens_.empty()) {
    if (!text.empty()) out.push_back({text, -1});
    return;
  }
  size_t text_begin = 0, pos = 0;
  while (pos < text.size()) {
    if (!is_first_byte_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    const int index = find_at(text, pos, parse_special);
    if (index < 0) {
      ++pos;
      continue;
    }
    const AddedToken& t = tokens_[index];
    size_t text_end = pos;
    if (t.lstrip) {
      while (text_end > text_begin && is_space(text[text_end - 1])) --text_end;
    }
    if (text_end > text_begin) out.push_back({text.substr(text_begin, text_end - text_begin), -1});
    out.push_back({text.substr(pos, t.content.size()), t.id});
    pos += t.content.size();
    if (t.rstrip) {
      while (pos < text.size() && is_space(text[pos])) ++pos;
    }
    text_begin = pos;
  }
  if (text_begin < text.size()) out.push_back({text.substr(text_begin), -1});
}

}  // namespace cairn::tok
