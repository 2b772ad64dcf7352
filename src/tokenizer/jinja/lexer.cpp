#include "tokenizer/jinja/lexer.h"

#include <array>
#include <cctype>
#include <utility>

#include "tokenizer/jinja/preprocess.h"
#include "tokenizer/jinja/text.h"
#include "tokenizer/jinja/value.h"

namespace cairn::jinja {

const char* token_type_name(TokenType type) {
  static constexpr std::array<const char*, 25> kNames = {"Text",
                                                         "NumericLiteral",
                                                         "StringLiteral",
                                                         "Identifier",
                                                         "Equals",
                                                         "OpenParen",
                                                         "CloseParen",
                                                         "OpenStatement",
                                                         "CloseStatement",
                                                         "OpenExpression",
                                                         "CloseExpression",
                                                         "OpenSquareBracket",
                                                         "CloseSquareBracket",
                                                         "OpenCurlyBracket",
                                                         "CloseCurlyBracket",
                                                         "Comma",
                                                         "Dot",
                                                         "Colon",
                                                         "Pipe",
                                                         "AdditiveBinaryOperator",
                                                         "MultiplicativeBinaryOperator",
                                                         "ExponentiationBinaryOperator",
                                                         "ComparisonBinaryOperator",
                                                         "UnaryOperator",
                                                         "Comment"};
  return kNames[static_cast<size_t>(type)];
}

SourcePos position_of(std::string_view source, uint32_t offset) {
  SourcePos pos{1, 1};
  for (uint32_t i = 0; i < offset && i < source.size(); ++i) {
    if (source[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

namespace {

bool is_ascii_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_word(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

constexpr std::array<std::pair<std::string_view, TokenType>, 29> kSymbols = {{
    {"{%", TokenType::kOpenStatement},  {"%}", TokenType::kCloseStatement},
    {"{{", TokenType::kOpenExpression}, {"}}", TokenType::kCloseExpression},
    {"(", TokenType::kOpenParen},       {")", TokenType::kCloseParen},
    {"{", TokenType::kOpenBrace},       {"}", TokenType::kCloseBrace},
    {"[", TokenType::kOpenBracket},     {"]", TokenType::kCloseBracket},
    {",", TokenType::kComma},           {".", TokenType::kDot},
    {":", TokenType::kColon},           {"|", TokenType::kPipe},
    {"<=", TokenType::kComparison},     {">=", TokenType::kComparison},
    {"==", TokenType::kComparison},     {"!=", TokenType::kComparison},
    {"<", TokenType::kComparison},      {">", TokenType::kComparison},
    {"+", TokenType::kAdditive},        {"-", TokenType::kAdditive},
    {"~", TokenType::kAdditive},        {"**", TokenType::kPower},
    {"*", TokenType::kMultiplicative},  {"//", TokenType::kMultiplicative},
    {"/", TokenType::kMultiplicative},  {"%", TokenType::kMultiplicative},
    {"=", TokenType::kEquals},
}};

// Scans preprocessed text into tokens, mirroring Hugging Face's lexer rules.
class Scanner {
 public:
  Scanner(const Mapped& m, std::string_view source) : m_(m), s_(m.text), source_(source) {}

  std::vector<Token> run() {
    while (pos_ < s_.size()) step();
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail_at(size_t at, std::string message) {
    TemplateError error(std::move(message));
    SourcePos p = position_of(source_, at < m_.origin.size() ? m_.origin[at] : source_.size());
    error.set_position(p.line, p.column);
    throw error;
  }

  void push(TokenType type, std::string value, size_t start) {
    uint32_t offset =
        start < m_.origin.size() ? m_.origin[start] : static_cast<uint32_t>(source_.size());
    tokens_.push_back(Token{type, std::move(value), offset});
  }

  bool last_is(TokenType type) const { return !tokens_.empty() && tokens_.back().type == type; }
  bool at(std::string_view seq) const { return s_.compare(pos_, seq.size(), seq) == 0; }

  // {%- / {{- / {#- remove the whitespace that ends the preceding text.
  void strip_trailing_whitespace() {
    if (!last_is(TokenType::kText)) return;
    tokens_.back().value = trim_end(tokens_.back().value);
    if (tokens_.back().value.empty()) tokens_.pop_back();
  }

  void skip_leading_whitespace() {
    while (pos_ < s_.size()) {
      size_t next = pos_;
      if (!is_js_space(decode_utf8(s_, next))) break;
      pos_ = next;
    }
  }

  void step() {
    bool after_tag = tokens_.empty() || last_is(TokenType::kCloseStatement) ||
                     last_is(TokenType::kCloseExpression) || last_is(TokenType::kComment);
    if (after_tag && scan_text()) return;
    if (at("{#")) return scan_comment();
    if (at("{%-") || at("{{-")) {
      strip_trailing_whitespace();
      bool statement = s_[pos_ + 1] == '%';
      push(statement ? TokenType::kOpenStatement : TokenType::kOpenExpression,
           statement ? "{%" : "{{", pos_);
      if (!statement) brace_depth_ = 0;
      pos_ += 3;
      return;
    }
    while (pos_ < s_.size() && is_ascii_space(s_[pos_])) ++pos_;
    if (pos_ >= s_.size()) fail_at(pos_, "Unexpected end of input");
    if (at("-%}") || at("-}}")) {
      bool statement = s_[pos_ + 1] == '%';
      push(statement ? TokenType::kCloseStatement : TokenType::kCloseExpression,
           statement ? "%}" : "}}", pos_);
      pos_ += 3;
      skip_leading_whitespace();
      return;
    }
    char c = s_[pos_];
    if ((c == '-' || c == '+') && scan_sign()) return;
    if (scan_symbol()) return;
    if (c == '\'' || c == '"') return scan_string(c);
    if (is_digit(c)) return scan_number();
    if (is_word(c)) {
      size_t start = pos_;
      while (pos_ < s_.size() && is_word(s_[pos_])) ++pos_;
      push(TokenType::kIdentifier, s_.substr(start, pos_ - start), start);
      return;
    }
    fail_at(pos_, "Unexpected character: " + std::string(1, c));
  }

  bool scan_text() {
    size_t start = pos_;
    while (pos_ < s_.size() &&
           !(s_[pos_] == '{' && pos_ + 1 < s_.size() &&
             (s_[pos_ + 1] == '%' || s_[pos_ + 1] == '{' || s_[pos_ + 1] == '#')))
      ++pos_;
    if (pos_ == start) return false;
    push(TokenType::kText, s_.substr(start, pos_ - start), start);
    return true;
  }

  void scan_comment() {
    size_t start = pos_;
    pos_ += 2;
    bool strip_before = pos_ < s_.size() && s_[pos_] == '-';
    if (strip_before) ++pos_;
    size_t body = pos_;
    while (!(s_[pos_] == '#' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '}')) {
      if (pos_ + 2 >= s_.size()) fail_at(start, "Missing end of comment tag");
      ++pos_;
    }
    std::string comment = s_.substr(body, pos_ - body);
    bool strip_after = !comment.empty() && comment.back() == '-';
    if (strip_after) comment.pop_back();
    if (strip_before) strip_trailing_whitespace();
    push(TokenType::kComment, std::move(comment), start);
    pos_ += 2;
    if (strip_after) skip_leading_whitespace();
  }

  // A sign after an operand is a binary operator; elsewhere it is unary, or
  // part of a number literal when digits follow.
  bool scan_sign() {
    if (tokens_.empty() || last_is(TokenType::kText))
      fail_at(pos_, std::string("Unexpected character: ") + s_[pos_]);
    switch (tokens_.back().type) {
      case TokenType::kIdentifier:
      case TokenType::kNumber:
      case TokenType::kString:
      case TokenType::kCloseParen:
      case TokenType::kCloseBracket:
        return false;
      default:
        break;
    }
    size_t start = pos_++;
    std::string num = take_digits();
    if (!num.empty() && pos_ + 1 < s_.size() && s_[pos_] == '.' && is_digit(s_[pos_ + 1])) {
      ++pos_;
      num.push_back('.');
      num.append(take_digits());
    }
    std::string text(1, s_[start]);
    text.append(num);
    push(num.empty() ? TokenType::kUnary : TokenType::kNumber, std::move(text), start);
    return true;
  }

  std::string take_digits() {
    size_t start = pos_;
    while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    return s_.substr(start, pos_ - start);
  }

  bool scan_symbol() {
    for (const auto& [seq, type] : kSymbols) {
      if (type == TokenType::kCloseExpression && brace_depth_ > 0) continue;
      if (!at(seq)) continue;
      push(type, std::string(seq), pos_);
      if (type == TokenType::kOpenExpression) brace_depth_ = 0;
      if (type == TokenType::kOpenBrace) ++brace_depth_;
      if (type == TokenType::kCloseBrace) --brace_depth_;
      pos_ += seq.size();
      return true;
    }
    return false;
  }

  void scan_number() {
    size_t start = pos_;
    std::string num = take_digits();
    if (!last_is(TokenType::kDot) && pos_ + 1 < s_.size() && s_[pos_] == '.' &&
        is_digit(s_[pos_ + 1])) {
      ++pos_;
      num.push_back('.');
      num.append(take_digits());
    }
    push(TokenType::kNumber, std::move(num), start);
  }

  void scan_string(char quote) {
    size_t start = pos_++;
    std::string out;
    char32_t pending_high = 0;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] != '\\') {
        out += s_[pos_++];
        continue;
      }
      if (++pos_ >= s_.size()) fail_at(start, "Unexpected end of input");
      char e = s_[pos_++];
      if (e == 'x' || e == 'u') {
        char32_t unit = scan_hex(e == 'x' ? 2 : 4);
        if (unit >= 0xD800 && unit < 0xDC00) {
          pending_high = unit;
          continue;
        }
        if (unit >= 0xDC00 && unit < 0xE000 && pending_high)
          unit = 0x10000 + ((pending_high - 0xD800) << 10) + (unit - 0xDC00);
        pending_high = 0;
        append_utf8(out, unit);
        continue;
      }
      out += unescape(e, start);
    }
    if (pos_ >= s_.size()) fail_at(start, "Unexpected end of input");
    ++pos_;
    push(TokenType::kString, std::move(out), start);
  }

  char32_t scan_hex(size_t n) {
    std::string hex = s_.substr(pos_, n);
    bool ok = hex.size() == n;
    for (char h : hex) ok = ok && std::isxdigit(static_cast<unsigned char>(h));
    if (!ok) fail_at(pos_, "Invalid hexadecimal escape sequence: \\" + hex);
    pos_ += n;
    return static_cast<char32_t>(std::stoul(hex, nullptr, 16));
  }

  char unescape(char e, size_t start) {
    switch (e) {
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      case 'v':
        return '\v';
      case '\'':
      case '"':
      case '\\':
        return e;
      default:
        fail_at(start, std::string("Unexpected escaped character: ") + e);
    }
  }

  const Mapped& m_;
  const std::string& s_;
  std::string_view source_;
  size_t pos_ = 0;
  int brace_depth_ = 0;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const LexOptions& options) {
  Mapped m = preprocess(source, options);
  return Scanner(m, source).run();
}

}  // namespace cairn::jinja
