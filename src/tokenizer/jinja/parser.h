// Parser: tokens to a syntax tree. Grammar and precedence follow the
// templates Hugging Face renders (lowest first): `a if c else b`, or, and,
// not, comparisons and `in`, + - ~, * / // %, **, `is` tests, `|` filters,
// unary signs, calls/member access/slices, literals.
#pragma once

#include <string_view>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/lexer.h"

namespace cairn::jinja {

// The statements of a whole template. Throws TemplateError (with a position).
std::vector<NodePtr> parse(const std::vector<Token>& tokens, std::string_view source);

}  // namespace cairn::jinja
