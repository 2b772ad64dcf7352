// Pre-tokenizers: cut a normalized segment into words (HF "pre_tokenizer").
// Byte-level mapping is not done here: BpeModel works on raw bytes directly.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/parts.h"
#include "tokenizer/regex.h"

namespace cairn::tok {

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// Splits each word at the matches of a pattern (PCRE2 regex or literal string).
class SplitPreTokenizer final : public PreTokenizer {
 public:
  SplitPreTokenizer(std::unique_ptr<Regex> regex, SplitBehavior behavior, bool invert)
      : regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}
  SplitPreTokenizer(std::string literal, SplitBehavior behavior, bool invert)
      : literal_(std::move(literal)), behavior_(behavior), invert_(invert) {}
  void apply(Words& words) const override;

 private:
  std::unique_ptr<Regex> regex_;
  std::string literal_;
  SplitBehavior behavior_;
  bool invert_;
};

// HF ByteLevel: optional prefix space, then (use_regex) GPT-2's split regex.
class ByteLevelPreTokenizer final : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex);
  void apply(Words& words) const override;

 private:
  bool add_prefix_space_;
  std::unique_ptr<SplitPreTokenizer> split_;  // null without use_regex
};

enum class PrependScheme { kAlways, kFirst, kNever };

// SentencePiece's space handling: ' ' → replacement, a leading replacement
// prepended (always, or only to the input's first segment), then split before
// each replacement.
class MetaspacePreTokenizer final : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void apply(Words& words) const override;

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

// ASCII digits: each alone (individual) or in runs.
class DigitsPreTokenizer final : public PreTokenizer {
 public:
  explicit DigitsPreTokenizer(bool individual) : individual_(individual) {}
  void apply(Words& words) const override;

 private:
  bool individual_;
};

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps)
      : steps_(std::move(steps)) {}
  void apply(Words& words) const override;

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

// Pieces of [begin, end) given the matches inside it, per HF's split behaviours.
void split_by_matches(uint32_t begin, uint32_t end,
                      const std::vector<std::pair<uint32_t, uint32_t>>& matches,
                      SplitBehavior behavior, bool invert,
                      std::vector<std::pair<uint32_t, uint32_t>>& out);

inline constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

}  // namespace cairn::tok
