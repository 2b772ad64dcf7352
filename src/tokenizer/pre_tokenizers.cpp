#include "tokenizer/pre_tokenizers.h"

namespace cairn::tok {
namespace {

using Span = std::pair<uint32_t, uint32_t>;
struct Piece {
  Span span;
  bool flag;
};

// The segments of [begin, end): gaps (flag false) and matches (flag true).
std::vector<Piece> segments(uint32_t begin, uint32_t end, const std::vector<Span>& matches,
                            bool invert) {
  std::vector<Piece> pieces;
  uint32_t pos = begin;
  for (const Span& m : matches) {
    if (m.first > pos) pieces.push_back({{pos, m.first}, invert});
    pieces.push_back({m, !invert});
    pos = m.second;
  }
  if (pos < end) pieces.push_back({{pos, end}, invert});
  return pieces;
}

}  // namespace

void split_by_matches(uint32_t begin, uint32_t end, const std::vector<Span>& matches,
                      SplitBehavior behavior, bool invert, std::vector<Span>& out) {
  std::vector<Piece> pieces = segments(begin, end, matches, invert);
  const size_t first_out = out.size();
  bool previous = false;
  switch (behavior) {
    case SplitBehavior::kRemoved:
      for (const Piece& p : pieces)
        if (!p.flag) out.push_back(p.span);
      return;
    case SplitBehavior::kIsolated:
      for (const Piece& p : pieces) out.push_back(p.span);
      return;
    case SplitBehavior::kMergedWithPrevious:
      for (const Piece& p : pieces) {
        if (p.flag && !previous && out.size() > first_out) {
          out.back().second = p.span.second;
        } else {
          out.push_back(p.span);
        }
        previous = p.flag;
      }
      return;
    case SplitBehavior::kMergedWithNext: {
      std::vector<Span> reversed;
      for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
        if (it->flag && !previous && !reversed.empty()) {
          reversed.back().first = it->span.first;
        } else {
          reversed.push_back(it->span);
        }
        previous = it->flag;
      }
      out.insert(out.end(), reversed.rbegin(), reversed.rend());
      return;
    }
    case SplitBehavior::kContiguous:
      for (size_t i = 0; i < pieces.size(); ++i) {
        if (i > 0 && pieces[i].flag == previous) {
          out.back().second = pieces[i].span.second;
        } else {
          out.push_back(pieces[i].span);
        }
        previous = pieces[i].flag;
      }
      return;
  }
}

void SplitPreTokenizer::apply(Words& words) const {
  std::vector<Span> out, matches;
  out.reserve(words.spans.size() * 2);
  const std::string_view text = words.text;
  for (const Span& span : words.spans) {
    matches.clear();
    if (regex_) {
      regex_->find_all(text, span.first, span.second, matches);
    } else if (!literal_.empty()) {
      const std::string_view piece = text.substr(span.first, span.second - span.first);
      for (size_t pos = 0; (pos = piece.find(literal_, pos)) != std::string_view::npos;
           pos += literal_.size())
        matches.push_back({span.first + static_cast<uint32_t>(pos),
                           span.first + static_cast<uint32_t>(pos + literal_.size())});
    }
    split_by_matches(span.first, span.second, matches, behavior_, invert_, out);
  }
  words.spans.swap(out);
}

ByteLevelPreTokenizer::ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
    : add_prefix_space_(add_prefix_space) {
  if (use_regex)
    split_ = std::make_unique<SplitPreTokenizer>(
        std::make_unique<Regex>(kGpt2Pattern, "ByteLevel pre-tokenizer"), SplitBehavior::kIsolated,
        false);
}

namespace {

// Rewrites every word through fn(word, index, out_text) and keeps the new spans.
template <typename Fn>
void rewrite(Words& words, Fn fn) {
  Words next;
  next.first_segment = words.first_segment;
  next.text.reserve(words.text.size() + words.text.size() / 4);
  const std::string_view text = words.text;
  for (const Span& span : words.spans) {
    fn(text.substr(span.first, span.second - span.first), span.first, next);
  }
  words.text.swap(next.text);
  words.spans.swap(next.spans);
}

void push_word(Words& out, std::string_view word) {
  const auto begin = static_cast<uint32_t>(out.text.size());
  out.text.append(word);
  out.spans.push_back({begin, static_cast<uint32_t>(out.text.size())});
}

}  // namespace

void ByteLevelPreTokenizer::apply(Words& words) const {
  if (add_prefix_space_) {
    rewrite(words, [](std::string_view word, uint32_t, Words& out) {
      const auto begin = static_cast<uint32_t>(out.text.size());
      if (word.empty() || word[0] != ' ') out.text.push_back(' ');
      out.text.append(word);
      out.spans.push_back({begin, static_cast<uint32_t>(out.text.size())});
    });
  }
  if (split_) split_->apply(words);
}

void MetaspacePreTokenizer::apply(Words& words) const {
  rewrite(words, [&](std::string_view word, uint32_t begin, Words& out) {
    std::string piece;
    const bool at_start = begin == 0 && words.first_segment;
    const bool starts =
        word.substr(0, 1) == " " || word.substr(0, replacement_.size()) == replacement_;
    if (scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && at_start)) {
      if (!starts) piece = replacement_;
    }
    for (char c : word) {
      if (c == ' ') {
        piece.append(replacement_);
      } else {
        piece.push_back(c);
      }
    }
    if (!split_) {
      push_word(out, piece);
      return;
    }
    // Split before each replacement (HF: MergedWithNext on the replacement).
    size_t start = 0;
    for (size_t pos = piece.find(replacement_, 1); pos != std::string::npos;
         pos = piece.find(replacement_, pos + replacement_.size())) {
      push_word(out, std::string_view(piece).substr(start, pos - start));
      start = pos;
    }
    if (start < piece.size()) push_word(out, std::string_view(piece).substr(start));
  });
}

void DigitsPreTokenizer::apply(Words& words) const {
  std::vector<Span> out, matches;
  const std::string_view text = words.text;
  for (const Span& span : words.spans) {
    matches.clear();
    for (uint32_t i = span.first; i < span.second; ++i) {
      if (text[i] >= '0' && text[i] <= '9') matches.push_back({i, i + 1});
    }
    split_by_matches(span.first, span.second, matches,
                     individual_ ? SplitBehavior::kIsolated : SplitBehavior::kContiguous, false,
                     out);
  }
  words.spans.swap(out);
}

void SequencePreTokenizer::apply(Words& words) const {
  for (const auto& step : steps_) step->apply(words);
}

}  // namespace cairn::tok
