#include "tokenizer/jinja/parser.h"

#include "tokenizer/jinja/parser_impl.h"

namespace cairn::jinja {

std::vector<NodePtr> parse(const std::vector<Token>& tokens, std::string_view source) {
  return detail::Parser(tokens, source).run();
}

}  // namespace cairn::jinja
