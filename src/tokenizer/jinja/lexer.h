// Lexer: turns template source into tokens. The source is first preprocessed
// the way Hugging Face renders chat templates (one trailing newline dropped,
// lstrip_blocks and trim_blocks on, {% generation %} tags removed), keeping
// for each byte its offset in the original source so errors can name lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::jinja {

enum class TokenType {
  kText,
  kNumber,
  kString,
  kIdentifier,
  kEquals,
  kOpenParen,
  kCloseParen,
  kOpenStatement,
  kCloseStatement,
  kOpenExpression,
  kCloseExpression,
  kOpenBracket,
  kCloseBracket,
  kOpenBrace,
  kCloseBrace,
  kComma,
  kDot,
  kColon,
  kPipe,
  kAdditive,        // + - ~
  kMultiplicative,  // * / // %
  kPower,           // **
  kComparison,      // < > <= >= == !=
  kUnary,           // a sign not followed by digits
  kComment,
};

const char* token_type_name(TokenType type);

struct Token {
  TokenType type;
  std::string value;
  uint32_t offset;  // byte offset in the original source
};

struct LexOptions {
  bool lstrip_blocks = true;
  bool trim_blocks = true;
};

// Line and column (1-based, columns in bytes) of a byte offset.
struct SourcePos {
  int line = 0;
  int column = 0;
};
SourcePos position_of(std::string_view source, uint32_t offset);

// Throws TemplateError (with its position set) on a lexical error.
std::vector<Token> tokenize(std::string_view source, const LexOptions& options = {});

}  // namespace cairn::jinja
