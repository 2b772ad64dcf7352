// Statement parsing: {% set %}, {% if %}, {% for %}, {% macro %}, {% call %},
// {% filter %}, {% break %}, {% continue %}.
#include "tokenizer/jinja/parser_impl.h"

namespace cairn::jinja::detail {

NodePtr Parser::parse_statement() {
  expect(T::kOpenStatement, "Expected '{%'");
  if (!is(T::kIdentifier)) fail("Expected a statement name after '{%'");
  const Token& name = t_[i_++];
  const std::string& n = name.value;
  if (n == "set") return parse_set(name.offset);
  if (n == "if") {
    NodePtr node = parse_if(name.offset);
    expect_end_tag("endif");
    return node;
  }
  if (n == "for") {
    NodePtr node = parse_for(name.offset);
    expect_end_tag("endfor");
    return node;
  }
  if (n == "macro") {
    NodePtr node = parse_macro(name.offset);
    expect_end_tag("endmacro");
    return node;
  }
  if (n == "call") return parse_call_block(name.offset);
  if (n == "filter") return parse_filter_block(name.offset);
  if (n == "break" || n == "continue") {
    expect(T::kCloseStatement, "Expected '%}'");
    return make_node(n == "break" ? NodeKind::kBreak : NodeKind::kContinue, name.offset);
  }
  --i_;
  fail("Unknown statement type: " + n);
}

NodePtr Parser::parse_set(uint32_t at) {
  auto node = make_node(NodeKind::kSet, at);
  node->kids.push_back(parse_sequence(false));
  if (is(T::kEquals)) {
    ++i_;
    node->kids.push_back(parse_sequence(false));
  } else {
    node->kids.push_back(nullptr);
    expect(T::kCloseStatement, "Expected '=' or '%}' after the set target");
    node->body = parse_until({"endset"});
    expect(T::kOpenStatement, "Expected '{%'");
    expect_name("endset");
  }
  expect(T::kCloseStatement, "Expected '%}'");
  return node;
}

NodePtr Parser::parse_if(uint32_t at) {
  auto node = make_node(NodeKind::kIf, at);
  node->kids.push_back(parse_expression());
  expect(T::kCloseStatement, "Expected '%}' after the if condition");
  node->body = parse_until({"elif", "else", "endif"});
  if (is_statement({"elif"})) {
    uint32_t elif_at = t_[i_ + 1].offset;
    i_ += 2;
    node->alt.push_back(parse_if(elif_at));
  } else if (is_statement({"else"})) {
    i_ += 2;
    expect(T::kCloseStatement, "Expected '%}' after else");
    node->alt = parse_until({"endif"});
  }
  return node;
}

NodePtr Parser::parse_for(uint32_t at) {
  auto node = make_node(NodeKind::kFor, at);
  NodePtr target = parse_sequence(true);
  if (target->kind != NodeKind::kName && target->kind != NodeKind::kTuple)
    fail("Expected a name or a tuple of names as the loop variable");
  if (!is_name("in")) fail("Expected 'in' after the loop variable");
  ++i_;
  node->kids.push_back(std::move(target));
  node->kids.push_back(parse_expression());
  expect(T::kCloseStatement, "Expected '%}' after the loop header");
  node->body = parse_until({"endfor", "else"});
  if (is_statement({"else"})) {
    i_ += 2;
    expect(T::kCloseStatement, "Expected '%}' after else");
    node->alt = parse_until({"endfor"});
  }
  return node;
}

namespace {

// Whether `kwargs` / `varargs` are read in a macro body (they are then bound).
void find_special_names(const Node* node, bool& kwargs, bool& varargs) {
  if (!node) return;
  if (node->kind == NodeKind::kName) {
    kwargs = kwargs || node->text == "kwargs";
    varargs = varargs || node->text == "varargs";
  }
  for (const auto* list : {&node->kids, &node->args, &node->body, &node->alt})
    for (const auto& child : *list) find_special_names(child.get(), kwargs, varargs);
}

}  // namespace

NodePtr Parser::parse_macro(uint32_t at) {
  auto node = make_node(NodeKind::kMacro, at);
  NodePtr name = parse_primary();
  if (name->kind != NodeKind::kName) fail("Expected a name after 'macro'");
  node->text = name->text;
  node->args = parse_args(true);
  expect(T::kCloseStatement, "Expected '%}' after the macro header");
  node->body = parse_until({"endmacro"});
  for (const auto& stmt : node->body) find_special_names(stmt.get(), node->flag, node->flag2);
  return node;
}

NodePtr Parser::parse_call_block(uint32_t at) {
  auto node = make_node(NodeKind::kCallBlock, at);
  if (is(T::kOpenParen)) node->args = parse_args(true);
  uint32_t callee_at = here();
  NodePtr callee = parse_primary();
  if (callee->kind != NodeKind::kName) fail("Expected a name after 'call'");
  auto call = make_node(NodeKind::kCall, callee_at);
  call->kids.push_back(std::move(callee));
  call->args = parse_args(false);
  node->kids.push_back(std::move(call));
  expect(T::kCloseStatement, "Expected '%}' after the call header");
  node->body = parse_until({"endcall"});
  for (const auto& stmt : node->body) find_special_names(stmt.get(), node->flag, node->flag2);
  expect_end_tag("endcall");
  return node;
}

NodePtr Parser::parse_filter_block(uint32_t at) {
  auto node = make_node(NodeKind::kFilterBlock, at);
  NodePtr filter = parse_primary();
  if (filter->kind == NodeKind::kName && is(T::kOpenParen)) filter = parse_call(std::move(filter));
  node->kids.push_back(std::move(filter));
  expect(T::kCloseStatement, "Expected '%}' after the filter name");
  node->body = parse_until({"endfilter"});
  expect_end_tag("endfilter");
  return node;
}

}  // namespace cairn::jinja::detail
