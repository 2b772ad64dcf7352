// Normalizers: rewrite a text segment before pre-tokenization (HF "normalizer").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/parts.h"
#include "tokenizer/regex.h"

namespace cairn::tok {

// Prepends `prefix` to a non-empty segment (SentencePiece's dummy prefix).
class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  void apply(std::string& text) const override;

 private:
  std::string prefix_;
};

// Replaces every occurrence of a literal string.
class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(std::string from, std::string to)
      : from_(std::move(from)), to_(std::move(to)) {}
  void apply(std::string& text) const override;

 private:
  std::string from_, to_;
};

// Replaces every match of a regex.
class RegexReplaceNormalizer final : public Normalizer {
 public:
  RegexReplaceNormalizer(std::unique_ptr<Regex> regex, std::string to)
      : regex_(std::move(regex)), to_(std::move(to)) {}
  void apply(std::string& text) const override;

 private:
  std::unique_ptr<Regex> regex_;
  std::string to_;
};

enum class UnicodeForm { kNfc, kNfd, kNfkc, kNfkd };

// Unicode normalization (utf8proc); invalid UTF-8 is repaired to U+FFFD first.
class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(UnicodeForm form) : form_(form) {}
  void apply(std::string& text) const override;

 private:
  UnicodeForm form_;
};

class LowercaseNormalizer final : public Normalizer {
 public:
  void apply(std::string& text) const override;
};

// Removes Unicode white space from the left and/or right end.
class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void apply(std::string& text) const override;

 private:
  bool left_, right_;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps)
      : steps_(std::move(steps)) {}
  void apply(std::string& text) const override;

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace cairn::tok
