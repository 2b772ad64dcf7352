// A render leaves nothing behind: a namespace or list a template made hold itself (a cycle of
// shared pointers) is emptied when the render ends (MutationLog). Each case puts a probe
// function (holding a token) inside the cycle; once the render and its scopes are gone, the
// token's only owner is the test again. Without the log the cycle keeps the probe alive.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/lexer.h"
#include "tokenizer/jinja/mutation_log.h"
#include "tokenizer/jinja/parser.h"

namespace cairn::jinja {
namespace {

// Renders `source` with a global `probe` whose function holds `token`; returns the output.
std::string render_with_probe(const std::string& source, const std::shared_ptr<int>& token) {
  auto globals = std::make_shared<Scope>();
  globals->set("namespace", Value::function(
                                [](const CallArgs& a, const ScopePtr&) {
                                  DictData d;
                                  for (const auto& [k, v] : a.keywords) d.set(k, v);
                                  return Value::namespace_of(std::move(d));
                                },
                                "namespace"));
  globals->set("probe", Value::function([token](const CallArgs&, const ScopePtr&) {
                 return Value::integer(*token);
               }));
  const std::vector<NodePtr> program = parse(tokenize(source), source);
  Interpreter interpreter(source);
  return interpreter.render(program, std::make_shared<Scope>(globals));
}

TEST(JinjaMutationLog, NamespaceHoldingItselfIsReleased) {
  auto token = std::make_shared<int>(7);
  EXPECT_EQ(render_with_probe("{% set ns = namespace(p=probe) %}{% set ns.me = ns %}"
                              "{{ ns.me.me.p() }}",
                              token),
            "7");
  EXPECT_EQ(token.use_count(), 1);
}

TEST(JinjaMutationLog, ListHoldingItselfIsReleased) {
  auto token = std::make_shared<int>(3);
  EXPECT_EQ(
      render_with_probe("{% set l = [probe] %}{% set _ = l.append(l) %}{{ l[1][1][0]() }}", token),
      "3");
  EXPECT_EQ(token.use_count(), 1);
}

TEST(JinjaMutationLog, ARenderThatFailsReleasesItsCycles) {
  auto token = std::make_shared<int>(1);
  EXPECT_THROW(render_with_probe("{% set ns = namespace(p=probe) %}{% set ns.me = ns %}"
                                 "{{ ns() }}",
                                 token),
               TemplateError);
  EXPECT_EQ(token.use_count(), 1);
}

TEST(JinjaMutationLog, StoresOutsideARenderAreNotNoted) {
  // No log open: note() records nothing (and nothing is emptied later).
  Value list = Value::list({Value::integer(1)});
  MutationLog::note(list);
  { MutationLog log; }
  EXPECT_EQ(list.as_list().items.size(), 1u);
}

}  // namespace
}  // namespace cairn::jinja
