// The public API: error messages that name template, line and column; render
// limits; chat-template loading from tokenizer_config.json and the context
// built from a chat request.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "tokenizer/chat_template.h"

namespace cairn {
namespace {

using Json = nlohmann::ordered_json;

std::string error_of(const std::string& source, const Json& context = Json::object()) {
  try {
    jinja::Template::parse(source, "t").render(context);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string render(const std::string& source, const Json& context = Json::object()) {
  return jinja::Template::parse(source, "t").render(context);
}

TEST(TemplateErrors, SyntaxErrorNamesTemplateLineAndColumn) {
  std::string e = error_of("line one\n{{ 'ok' }}\n  {{ 1 + }}\n");
  EXPECT_NE(e.find("template 't': line 3, column 10:"), std::string::npos) << e;
}

TEST(TemplateErrors, UnclosedBlockIsASyntaxError) {
  try {
    jinja::Template::parse("{% if x %}\nopen\n", "cfg.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kBadFile);
    EXPECT_NE(std::string(e.what()).find("template 'cfg.json': line 2"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("endif"), std::string::npos) << e.what();
  }
}

TEST(TemplateErrors, UnknownStatementNamesItsLine) {
  std::string e = error_of("a\nb\n{% frobnicate %}");
  EXPECT_NE(e.find("line 3, column 4: Unknown statement type: frobnicate"), std::string::npos) << e;
}

TEST(TemplateErrors, RenderErrorNamesTheLineOfTheFailingExpression) {
  std::string e =
      error_of("{% for m in messages %}\n{{ m.content }}\n{{ m.content | nosuch }}\n{% endfor %}",
               Json{{"messages", Json::array({Json{{"content", "hi"}}})}});
  EXPECT_NE(e.find("line 3, column 16: Unknown StringValue filter: nosuch"), std::string::npos)
      << e;
}

TEST(TemplateErrors, RaiseExceptionCarriesItsMessageAndLine) {
  try {
    render("ok\n{{ raise_exception('roles must alternate') }}");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("line 2, column 4: roles must alternate"),
              std::string::npos)
        << e.what();
  }
}

TEST(TemplateErrors, BadStringEscapeAndUnterminatedString) {
  EXPECT_NE(error_of("{{ 'a\\q' }}").find("Unexpected escaped character: q"), std::string::npos);
  EXPECT_NE(error_of("{{ 'abc }}").find("line 1, column 4: Unexpected end of input"),
            std::string::npos);
}

TEST(TemplateLimits, DeepRecursionIsAnErrorNotACrash) {
  std::string e = error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  EXPECT_NE(e.find("recursion too deep"), std::string::npos) << e;
}

TEST(TemplateLimits, DeeplyNestedSourceIsRefused) {
  std::string deep = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  EXPECT_NE(error_of(deep).find("nesting too deep"), std::string::npos);
}

TEST(TemplateLimits, OutputAndStringGrowthAreBounded) {
  jinja::RenderOptions options;
  options.limits.max_output_bytes = 1000;
  auto t = jinja::Template::parse("{% for i in range(100) %}0123456789abcdef{% endfor %}", "t");
  EXPECT_THROW(t.render(Json::object(), options), Error);
  std::string e = error_of(
      "{% set s = 'ab' %}{% for i in range(40) %}{% set s = s ~ s %}{% endfor %}{{ s | length }}");
  EXPECT_NE(e.find("too large"), std::string::npos) << e;
}

TEST(TemplateLimits, StepLimitStopsRunawayLoops) {
  jinja::RenderOptions options;
  options.limits.max_steps = 10000;
  auto t = jinja::Template::parse(
      "{% for a in range(1000) %}{% for b in range(1000) %}{% endfor %}{% endfor %}", "t");
  EXPECT_THROW(t.render(Json::object(), options), Error);
}

TEST(TemplateValues, ContextValuesRoundTripThroughTojson) {
  Json ctx =
      Json::parse(R"({"v": {"b": 1, "a": [true, null, 2.5, "x\n\u00e9"], "10": 0, "2": 1}})");
  // Integer-like keys come first in ascending order, as JavaScript objects list them.
  EXPECT_EQ(render("{{ v | tojson }}", ctx),
            R"({"2": 1, "10": 0, "b": 1, "a": [true, null, 2.5, "x\né"]})");
}

TEST(ChatTemplates, LoadsStringTemplateAndSpecialTokens) {
  Json config = {{"bos_token", {{"content", "<s>"}, {"lstrip", false}}},
                 {"eos_token", "</s>"},
                 {"pad_token", nullptr},
                 {"chat_template",
                  "{{ bos_token }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}"
                  "{% if add_generation_prompt %}[assistant:{% endif %}{{ eos_token }}"}};
  ChatTemplates templates = ChatTemplates::from_config(config, "tokenizer_config.json");
  EXPECT_EQ(templates.special_tokens(), (Json{{"bos_token", "<s>"}, {"eos_token", "</s>"}}));
  ChatInputs inputs;
  inputs.messages = Json::array({Json{{"role", "user"}, {"content", "hi"}}});
  EXPECT_EQ(templates.apply(inputs), "<s>[user:hi][assistant:</s>");
  inputs.add_generation_prompt = false;
  EXPECT_EQ(templates.apply(inputs), "<s>[user:hi]</s>");
}

TEST(ChatTemplates, ChoosesToolUseTemplateWhenToolsAreGiven) {
  Json config = {{"chat_template",
                  Json::array({Json{{"name", "default"}, {"template", "plain"}},
                               Json{{"name", "tool_use"},
                                    {"template", "tools={{ tools | length }} {{ flag }}"}}})}};
  ChatTemplates templates = ChatTemplates::from_config(config, "cfg");
  ChatInputs inputs;
  EXPECT_EQ(templates.apply(inputs), "plain");
  inputs.tools = Json::array({Json{{"type", "function"}}});
  inputs.extra = {{"flag", "on"}};
  EXPECT_EQ(templates.apply(inputs), "tools=1 on");
}

TEST(ChatTemplates, MalformedConfigsAreClearErrors) {
  EXPECT_THROW(ChatTemplates::from_config(Json{{"bos_token", "<s>"}}, "cfg"), Error);
  EXPECT_THROW(ChatTemplates::from_config(Json{{"chat_template", 5}}, "cfg"), Error);
  EXPECT_THROW(ChatTemplates::from_config(
                   Json{{"chat_template", Json::array({Json{{"name", "x"}}})}}, "cfg"),
               Error);
  try {
    ChatTemplates::from_config(Json{{"chat_template", "{% for %}"}},
                               "models/x/tokenizer_config.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("models/x/tokenizer_config.json"), std::string::npos)
        << e.what();
  }
}

TEST(ChatTemplates, ContextOmitsToolsWhenNoneAreGiven) {
  ChatInputs inputs;
  Json context = build_chat_context(inputs, Json{{"bos_token", "<s>"}});
  EXPECT_FALSE(context.contains("tools"));
  EXPECT_EQ(context["bos_token"], "<s>");
  EXPECT_EQ(context["add_generation_prompt"], true);
}

}  // namespace
}  // namespace cairn
