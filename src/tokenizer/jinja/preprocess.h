// Source preprocessing as Hugging Face applies it before lexing a chat
// template: one trailing newline dropped, lstrip_blocks, trim_blocks, and the
// {% generation %} / {% endgeneration %} tags removed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/jinja/lexer.h"

namespace cairn::jinja {

// Text with the original source offset of each byte (for error positions).
struct Mapped {
  std::string text;
  std::vector<uint32_t> origin;
  void push(char c, uint32_t from) {
    text += c;
    origin.push_back(from);
  }
};

Mapped preprocess(std::string_view source, const LexOptions& options);

}  // namespace cairn::jinja
