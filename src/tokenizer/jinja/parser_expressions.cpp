// Expression parsing, one function per precedence level (lowest first).
#include <cmath>
#include <cstdlib>

#include "tokenizer/jinja/parser_impl.h"

namespace cairn::jinja::detail {

// `a, b, c` as a tuple; a single expression as itself.
NodePtr Parser::parse_sequence(bool primary) {
  uint32_t at = here();
  NodePtr first = primary ? parse_primary() : parse_expression();
  if (!is(T::kComma)) return first;
  auto tuple = make_node(NodeKind::kTuple, at);
  tuple->kids.push_back(std::move(first));
  while (is(T::kComma)) {
    ++i_;
    tuple->kids.push_back(primary ? parse_primary() : parse_expression());
  }
  return tuple;
}

NodePtr Parser::parse_expression() {
  Depth guard(*this);
  uint32_t at = here();
  NodePtr value = parse_or();
  if (!is_name("if")) return value;
  ++i_;
  NodePtr condition = parse_or();
  if (is_name("else")) {
    ++i_;
    auto node = make_node(NodeKind::kTernary, at);
    node->kids.push_back(std::move(condition));
    node->kids.push_back(std::move(value));
    node->kids.push_back(parse_expression());
    return node;
  }
  auto node = make_node(NodeKind::kSelect, at);
  node->kids.push_back(std::move(value));
  node->kids.push_back(std::move(condition));
  return node;
}

NodePtr Parser::parse_or() {
  NodePtr left = parse_and();
  while (is_name("or")) {
    uint32_t at = t_[i_++].offset;
    left = binary("or", std::move(left), parse_and(), at);
  }
  return left;
}

NodePtr Parser::parse_and() {
  NodePtr left = parse_not();
  while (is_name("and")) {
    uint32_t at = t_[i_++].offset;
    left = binary("and", std::move(left), parse_not(), at);
  }
  return left;
}

NodePtr Parser::parse_not() {
  if (!is_name("not")) return parse_comparison();
  Depth guard(*this);
  auto node = make_node(NodeKind::kUnary, t_[i_++].offset);
  node->text = "not";
  node->kids.push_back(parse_not());
  return node;
}

NodePtr Parser::parse_comparison() {
  NodePtr left = parse_additive();
  while (true) {
    uint32_t at = here();
    std::string op;
    if (is_name("not") && is_name("in", 1)) {
      op = "not in";
      i_ += 2;
    } else if (is_name("in") || is(T::kComparison)) {
      op = t_[i_++].value;
    } else {
      return left;
    }
    left = binary(op, std::move(left), parse_additive(), at);
  }
}

NodePtr Parser::parse_additive() {
  NodePtr left = parse_multiplicative();
  while (is(T::kAdditive)) {
    const Token& op = t_[i_++];
    left = binary(op.value, std::move(left), parse_multiplicative(), op.offset);
  }
  return left;
}

NodePtr Parser::parse_multiplicative() {
  NodePtr left = parse_power();
  while (is(T::kMultiplicative)) {
    const Token& op = t_[i_++];
    left = binary(op.value, std::move(left), parse_power(), op.offset);
  }
  return left;
}

NodePtr Parser::parse_power() {
  NodePtr left = parse_test();
  while (is(T::kPower)) {
    const Token& op = t_[i_++];
    left = binary(op.value, std::move(left), parse_test(), op.offset);
  }
  return left;
}

namespace {

// Tests that take one argument, written `x is divisibleby 3` or `x is divisibleby(3)`.
bool test_takes_argument(const std::string& name) {
  static const std::set<std::string> kNames = {
      "divisibleby", "equalto", "eq", "ne", "lt", "gt", "le", "ge",
      "in",          "sameas",  "==", "!=", "<",  ">",  "<=", ">="};
  return kNames.count(name) > 0;
}

}  // namespace

NodePtr Parser::parse_test() {
  NodePtr operand = parse_filter();
  while (is_name("is")) {
    uint32_t at = t_[i_++].offset;
    auto node = make_node(NodeKind::kTest, at);
    if (is_name("not")) {
      node->flag = true;
      ++i_;
    }
    if (is(T::kComparison)) {
      node->text = t_[i_++].value;
    } else {
      NodePtr name = parse_primary();
      if (name->kind != NodeKind::kName) fail("Expected a test name after 'is'");
      node->text = name->text;
    }
    if (is(T::kOpenParen)) {
      node->args = parse_args(false);
    } else if (test_takes_argument(node->text) && i_ < t_.size() && !is(T::kCloseExpression) &&
               !is(T::kCloseStatement) && !is_name("and") && !is_name("or") && !is_name("else") &&
               !is_name("if")) {
      node->args.push_back(parse_call_member());
    }
    node->kids.push_back(std::move(operand));
    operand = std::move(node);
  }
  return operand;
}

NodePtr Parser::parse_filter() {
  NodePtr operand = parse_unary();
  while (is(T::kPipe)) {
    ++i_;
    NodePtr filter = parse_primary();
    if (filter->kind != NodeKind::kName) fail("Expected a filter name after '|'");
    uint32_t at = filter->offset;
    if (is(T::kOpenParen)) filter = parse_call(std::move(filter));
    auto node = make_node(NodeKind::kFilter, at);
    node->kids.push_back(std::move(operand));
    node->kids.push_back(std::move(filter));
    operand = std::move(node);
  }
  return operand;
}

NodePtr Parser::parse_unary() {
  if (i_ < t_.size() && (is(T::kUnary) || is(T::kAdditive)) &&
      (t_[i_].value == "-" || t_[i_].value == "+")) {
    Depth guard(*this);
    auto node = make_node(NodeKind::kUnary, t_[i_].offset);
    node->text = t_[i_++].value;
    node->kids.push_back(parse_unary());
    return node;
  }
  return parse_call_member();
}

NodePtr Parser::parse_call_member() {
  NodePtr member = parse_member(parse_primary());
  if (is(T::kOpenParen)) return parse_call(std::move(member));
  return member;
}

NodePtr Parser::parse_call(NodePtr callee) {
  Depth guard(*this);
  auto call = make_node(NodeKind::kCall, callee->offset);
  call->kids.push_back(std::move(callee));
  call->args = parse_args(false);
  NodePtr expr = parse_member(std::move(call));
  if (is(T::kOpenParen)) return parse_call(std::move(expr));
  return expr;
}

std::vector<NodePtr> Parser::parse_args(bool parameters) {
  expect(T::kOpenParen, "Expected '('");
  std::vector<NodePtr> args;
  std::set<std::string> names;
  bool saw_keyword = false;
  bool saw_spread = false;
  while (!is(T::kCloseParen)) {
    if (i_ >= t_.size()) fail("Expected ')'");
    bool kw_spread = is(T::kPower);
    bool spread = is(T::kMultiplicative) && t_[i_].value == "*";
    if (parameters && (kw_spread || spread))
      fail("Argument unpacking is not allowed in parameter declarations");
    if (kw_spread || spread) {
      if (spread && saw_spread) fail("Only one '*' argument unpacking is allowed");
      auto node = make_node(kw_spread ? NodeKind::kKwSpread : NodeKind::kSpread, t_[i_++].offset);
      node->kids.push_back(parse_expression());
      args.push_back(std::move(node));
      saw_spread = saw_spread || spread;
      if (is(T::kComma)) ++i_;
      if (kw_spread && !is(T::kCloseParen)) fail("'**' must be applied to the final argument");
      continue;
    }
    args.push_back(parse_argument(parameters, names, saw_keyword, saw_spread));
    if (is(T::kComma)) ++i_;
  }
  ++i_;
  return args;
}

NodePtr Parser::parse_argument(bool parameters, std::set<std::string>& names, bool& saw_keyword,
                               bool saw_spread) {
  NodePtr arg = parse_expression();
  if (is(T::kEquals)) {
    ++i_;
    if (arg->kind != NodeKind::kName) fail("Expected a name before '=' in the argument list");
    auto kw = make_node(NodeKind::kKeyword, arg->offset);
    kw->text = arg->text;
    kw->kids.push_back(parse_expression());
    arg = std::move(kw);
  }
  if (parameters) {
    if (arg->kind != NodeKind::kName && arg->kind != NodeKind::kKeyword)
      fail("Expected a name for a parameter declaration");
    if (!names.insert(arg->text).second) fail("Duplicate parameter name: " + arg->text);
  }
  if (arg->kind == NodeKind::kKeyword) {
    saw_keyword = true;
  } else if (saw_keyword) {
    fail(parameters ? "Non-default argument follows default argument"
                    : "Positional arguments must come before keyword arguments");
  } else if (saw_spread) {
    fail("Positional arguments must not follow '*' argument unpacking");
  }
  return arg;
}

NodePtr Parser::parse_member(NodePtr object) {
  while (is(T::kDot) || is(T::kOpenBracket)) {
    Depth guard(*this);
    const Token& op = t_[i_++];
    auto node = make_node(NodeKind::kMember, op.offset);
    node->kids.push_back(std::move(object));
    if (op.type == T::kOpenBracket) {
      node->flag = true;
      node->kids.push_back(parse_subscript(op.offset));
      expect(T::kCloseBracket, "Expected ']'");
    } else {
      NodePtr property = parse_primary();
      if (property->kind != NodeKind::kName && property->kind != NodeKind::kInteger)
        fail("Expected a name or an integer after '.'");
      node->kids.push_back(std::move(property));
    }
    object = std::move(node);
  }
  return object;
}

// Inside `[...]`: an index, or a slice `start:stop:step` with parts optional.
NodePtr Parser::parse_subscript(uint32_t at) {
  std::vector<NodePtr> parts;
  bool is_slice = false;
  while (!is(T::kCloseBracket)) {
    if (i_ >= t_.size()) fail("Expected ']'");
    if (is(T::kColon)) {
      parts.push_back(nullptr);
      ++i_;
      is_slice = true;
      continue;
    }
    parts.push_back(parse_expression());
    if (is(T::kColon)) {
      ++i_;
      is_slice = true;
    }
  }
  if (parts.empty()) fail("Expected an index or a slice inside '[]'");
  if (!is_slice) return std::move(parts[0]);
  if (parts.size() > 3) fail("A slice takes at most three parts");
  auto slice = make_node(NodeKind::kSlice, at);
  for (auto& part : parts) slice->kids.push_back(std::move(part));
  return slice;
}

NodePtr Parser::parse_number(const Token& tok) {
  bool is_float = tok.value.find('.') != std::string::npos;
  auto node = make_node(is_float ? NodeKind::kFloat : NodeKind::kInteger, tok.offset);
  double d = std::strtod(tok.value.c_str(), nullptr);
  if (is_float) {
    node->float_value = d;
  } else {
    if (std::fabs(d) > 9.0e18) fail("Integer literal out of range: " + tok.value);
    node->int_value = std::strtoll(tok.value.c_str(), nullptr, 10);
  }
  return node;
}

NodePtr Parser::parse_primary() {
  Depth guard(*this);
  if (i_ >= t_.size()) fail("Unexpected end of template");
  const Token& tok = t_[i_++];
  switch (tok.type) {
    case T::kNumber:
      return parse_number(tok);
    case T::kString: {
      auto node = make_node(NodeKind::kString, tok.offset);
      node->text = tok.value;
      while (is(T::kString)) node->text += t_[i_++].value;  // adjacent literals concatenate
      return node;
    }
    case T::kIdentifier: {
      auto node = make_node(NodeKind::kName, tok.offset);
      node->text = tok.value;
      return node;
    }
    case T::kOpenParen: {
      NodePtr expr = parse_sequence(false);
      expect(T::kCloseParen, "Expected ')'");
      return expr;
    }
    case T::kOpenBracket:
    case T::kOpenBrace: {
      bool is_list = tok.type == T::kOpenBracket;
      auto node = make_node(is_list ? NodeKind::kList : NodeKind::kDict, tok.offset);
      T close = is_list ? T::kCloseBracket : T::kCloseBrace;
      while (!is(close)) {
        if (i_ >= t_.size()) fail(is_list ? "Expected ']'" : "Expected '}'");
        node->kids.push_back(parse_expression());
        if (!is_list) {
          expect(T::kColon, "Expected ':' between a key and its value");
          node->kids.push_back(parse_expression());
        }
        if (is(T::kComma)) ++i_;
      }
      ++i_;
      return node;
    }
    default:
      --i_;
      fail(std::string("Unexpected token: ") + token_type_name(tok.type));
  }
}

}  // namespace cairn::jinja::detail
