// The parser's internals, shared by parser_statements.cpp and
// parser_expressions.cpp (not part of the public interface).
#pragma once

#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/lexer.h"
#include "tokenizer/jinja/value.h"

namespace cairn::jinja::detail {

using T = TokenType;
constexpr int kMaxNesting = 200;  // nested expressions/blocks before the parser refuses

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, std::string_view source) : t_(tokens), source_(source) {}

  std::vector<NodePtr> run() {
    std::vector<NodePtr> body;
    while (i_ < t_.size()) body.push_back(parse_any());
    return body;
  }

 private:
  // Nesting guard: deep input cannot overflow the stack.
  struct Depth {
    explicit Depth(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxNesting) p_.fail("template nesting too deep");
    }
    ~Depth() { --p_.depth_; }
    Parser& p_;
  };

  [[noreturn]] void fail(std::string message) const {
    TemplateError error(std::move(message));
    uint32_t offset = i_ < t_.size() ? t_[i_].offset : static_cast<uint32_t>(source_.size());
    if (i_ >= t_.size() && !t_.empty()) offset = t_.back().offset;
    SourcePos p = position_of(source_, offset);
    error.set_position(p.line, p.column);
    throw error;
  }

  bool is(T type, size_t ahead = 0) const {
    return i_ + ahead < t_.size() && t_[i_ + ahead].type == type;
  }
  bool is_name(std::string_view name, size_t ahead = 0) const {
    return is(T::kIdentifier, ahead) && t_[i_ + ahead].value == name;
  }
  bool is_statement(std::initializer_list<std::string_view> names) const {
    if (!is(T::kOpenStatement) || !is(T::kIdentifier, 1)) return false;
    for (auto n : names)
      if (t_[i_ + 1].value == n) return true;
    return false;
  }
  uint32_t here() const {
    return i_ < t_.size() ? t_[i_].offset : static_cast<uint32_t>(source_.size());
  }

  const Token& expect(T type, const char* what) {
    if (i_ >= t_.size()) fail(std::string(what) + ", got the end of the template");
    if (t_[i_].type != type)
      fail(std::string(what) + ", got " + token_type_name(t_[i_].type) + " '" + t_[i_].value + "'");
    return t_[i_++];
  }
  void expect_name(const char* name) {
    if (!is_name(name)) fail(std::string("Expected '") + name + "'");
    ++i_;
  }
  void expect_end_tag(const char* name) {
    expect(T::kOpenStatement, "Expected '{%'");
    expect_name(name);
    expect(T::kCloseStatement, "Expected '%}'");
  }
  // Statements until one of `names` opens; fails at the end of the template,
  // naming the closing tag (the name that starts with "end").
  std::vector<NodePtr> parse_until(std::initializer_list<std::string_view> names) {
    std::vector<NodePtr> body;
    while (!is_statement(names)) {
      if (i_ >= t_.size()) {
        std::string_view closing = *names.begin();
        for (auto n : names)
          if (n.substr(0, 3) == "end") closing = n;
        fail("Missing '{% " + std::string(closing) + " %}'");
      }
      body.push_back(parse_any());
    }
    return body;
  }

  NodePtr parse_any() {
    Depth guard(*this);
    const Token& tok = t_[i_];
    switch (tok.type) {
      case T::kComment: {
        ++i_;
        return make_node(NodeKind::kComment, tok.offset);
      }
      case T::kText: {
        auto node = make_node(NodeKind::kText, tok.offset);
        node->text = t_[i_++].value;
        return node;
      }
      case T::kOpenStatement:
        return parse_statement();
      case T::kOpenExpression: {
        ++i_;
        NodePtr expr = parse_expression();
        expect(T::kCloseExpression, "Expected '}}'");
        return expr;
      }
      default:
        fail(std::string("Unexpected token type: ") + token_type_name(tok.type));
    }
  }

  NodePtr parse_statement();
  NodePtr parse_set(uint32_t at);
  NodePtr parse_if(uint32_t at);
  NodePtr parse_for(uint32_t at);
  NodePtr parse_macro(uint32_t at);
  NodePtr parse_call_block(uint32_t at);
  NodePtr parse_filter_block(uint32_t at);

  NodePtr parse_sequence(bool primary);
  NodePtr parse_expression();
  NodePtr parse_or();
  NodePtr parse_and();
  NodePtr parse_not();
  NodePtr parse_comparison();
  NodePtr parse_additive();
  NodePtr parse_multiplicative();
  NodePtr parse_power();
  NodePtr parse_test();
  NodePtr parse_filter();
  NodePtr parse_unary();
  NodePtr parse_call_member();
  NodePtr parse_call(NodePtr callee);
  std::vector<NodePtr> parse_args(bool parameters);
  NodePtr parse_argument(bool parameters, std::set<std::string>& names, bool& saw_keyword,
                         bool saw_spread);
  NodePtr parse_member(NodePtr object);
  NodePtr parse_subscript(uint32_t at);
  NodePtr parse_primary();
  NodePtr parse_number(const Token& tok);
  NodePtr binary(std::string op, NodePtr left, NodePtr right, uint32_t at) {
    auto node = make_node(NodeKind::kBinary, at);
    node->text = std::move(op);
    node->kids.push_back(std::move(left));
    node->kids.push_back(std::move(right));
    return node;
  }

  const std::vector<Token>& t_;
  std::string_view source_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace cairn::jinja::detail
