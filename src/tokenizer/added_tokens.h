// Added tokens (HF added_tokens, GGUF control and user-defined tokens) are cut
// out of the text before normalization; the text between them goes to the model.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::tok {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;      // matched only when the caller asks to parse special tokens
  bool lstrip = false;       // swallows whitespace on its left
  bool rstrip = false;       // swallows whitespace on its right
  bool single_word = false;  // matches only with no word character on either side
};

// A piece of the input: a matched token (id >= 0) or text for the model (id -1).
struct Segment {
  std::string_view text;
  int32_t id = -1;
};

class AddedTokens {
 public:
  void add(AddedToken token);
  bool empty() const { return tokens_.empty(); }
  const std::vector<AddedToken>& tokens() const { return tokens_; }
  // Splits text, leftmost-longest match first; appends to out.
  void split(std::string_view text, bool parse_special, std::vector<Segment>& out) const;

 private:
  // Index of the longest usable match starting at pos, or -1.
  int find_at(std::string_view text, size_t pos, bool parse_special) const;

  std::vector<AddedToken> tokens_;
  std::array<std::vector<int>, 256> by_first_byte_;  // token indices, longest first
  std::array<bool, 256> is_first_byte_{};
};

}  // namespace cairn::tok
