// Request bodies into engine Requests: fields, defaults, and 400s naming the field.
#include <gtest/gtest.h>
#include <unistd.h>

#include "server/json_fields.h"
#include "server_fixture.h"

namespace cairn::server {
namespace {

using test::api_error_of;

class RequestParse : public ::testing::Test {
 protected:
  test::TinyServerModel m;
  ApiError chat_error(const std::string& body) {
    return api_error_of([&] { parse_chat(body, m.ctx); });
  }
  void expect_field_error(const std::string& body, const std::string& param) {
    ApiError e = chat_error(body);
    EXPECT_EQ(e.status, 400) << body;
    EXPECT_EQ(e.param, param) << body << " → " << e.what();
    EXPECT_NE(std::string(e.what()).find(param), std::string::npos) << e.what();
  }
};

constexpr const char* kHello = R"("messages":[{"role":"user","content":"hi"}])";

TEST_F(RequestParse, ChatRendersTheTemplateAndFillsDefaults) {
  ParsedRequest p = parse_chat(std::string("{") + kHello + "}", m.ctx);
  ASSERT_EQ(p.requests.size(), 1u);
  const Request& r = p.requests[0];
  // <|im_start|> u s e r \n h i <|im_end|> \n <|im_start|> a s s i s t a n t \n
  std::vector<int32_t> want = {1,       3 + 'u', 3 + 's', 3 + 'e',  3 + 'r', 3 + '\n',
                               3 + 'h', 3 + 'i', 2,       3 + '\n', 1};
  ASSERT_GE(r.prompt_ids.size(), want.size());
  EXPECT_EQ(std::vector<int32_t>(r.prompt_ids.begin(), r.prompt_ids.begin() + 11), want);
  EXPECT_EQ(r.max_tokens, 512 - static_cast<int32_t>(r.prompt_ids.size()));
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.7f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  ASSERT_TRUE(r.seed.has_value());  // chosen by the server, exact in a JavaScript number
  EXPECT_LT(*r.seed, uint64_t{1} << 53);
  EXPECT_TRUE(r.seed_chosen);  // a generation checkpoint's key says "server-chosen"
  EXPECT_EQ(r.stop_ids, std::vector<int32_t>{2});
  EXPECT_EQ(r.logprobs, -1);
  EXPECT_FALSE(p.stream);
}

TEST_F(RequestParse, ChatReadsEveryField) {
  ParsedRequest p = parse_chat(R"({"model":"x","messages":[{"role":"system","content":"s"},
    {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],
    "max_completion_tokens":7,"temperature":0,"top_p":0.5,"top_k":40,"min_p":0.1,"seed":-3,
    "presence_penalty":1.5,"frequency_penalty":-1,"repetition_penalty":1.1,"logit_bias":{"5":-100},
    "stop":["x","yz"],"n":1,"logprobs":true,"top_logprobs":3,"stream":true,
    "stream_options":{"include_usage":true},"user":"u","chat_template_kwargs":{"k":1}})",
                               m.ctx);
  const Request& r = p.requests[0];
  EXPECT_EQ(p.model, "x");
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_EQ(r.sampling.temperature, 0.0f);
  EXPECT_EQ(r.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.1f);
  ASSERT_TRUE(r.seed.has_value());
  EXPECT_EQ(*r.seed, static_cast<uint64_t>(int64_t{-3}));
  EXPECT_FALSE(r.seed_chosen);
  EXPECT_FLOAT_EQ(r.processors.presence_penalty, 1.5f);
  EXPECT_FLOAT_EQ(r.processors.frequency_penalty, -1.0f);
  EXPECT_FLOAT_EQ(r.processors.repetition_penalty, 1.1f);
  ASSERT_EQ(r.processors.logit_bias.size(), 1u);
  EXPECT_EQ(r.processors.logit_bias[0].first, 5);
  EXPECT_EQ(r.stop_strings, (std::vector<std::string>{"x", "yz"}));
  EXPECT_EQ(r.logprobs, 3);
  EXPECT_TRUE(p.stream && p.include_usage && p.logprobs);
  std::string text = m.tokenizer->decode(r.prompt_ids, false);
  EXPECT_NE(text.find("user\nab<|im_end|>"), std::string::npos) << text;
}

TEST_F(RequestParse, WrongTypesAndRangesNameTheField) {
  auto with = [](const std::string& extra) {
    return std::string("{") + kHello + "," + extra + "}";
  };
  expect_field_error(with(R"("temperature":"hot")"), "temperature");
  expect_field_error(with(R"("temperature":3)"), "temperature");
  expect_field_error(with(R"("max_tokens":-1)"), "max_tokens");
  expect_field_error(with(R"("max_tokens":0)"), "max_tokens");
  expect_field_error(with(R"("max_tokens":1e30)"), "max_tokens");
  expect_field_error(with(R"("max_tokens":2.5)"), "max_tokens");
  expect_field_error(with(R"("top_p":0)"), "top_p");
  expect_field_error(with(R"("top_k":"a")"), "top_k");
  expect_field_error(with(R"("n":2)"), "n");
  expect_field_error(with(R"("stream":"yes")"), "stream");
  expect_field_error(with(R"("stop":[1])"), "stop[0]");
  expect_field_error(with(R"("stop":"")"), "stop");
  expect_field_error(with(R"("logit_bias":{"999999":1})"), "logit_bias.999999");
  expect_field_error(with(R"("logit_bias":{"5":500})"), "logit_bias.5");
  expect_field_error(with(R"("top_logprobs":2)"), "top_logprobs");
  expect_field_error(with(R"("seed":"x")"), "seed");
  expect_field_error(with(R"("stream_options":{"include_usage":1})"),
                     "stream_options.include_usage");
  expect_field_error(with(R"("response_format":{"type":"json_object"})"), "response_format");
  expect_field_error(R"({"messages":[{"role":"wizard","content":"x"}]})", "messages[0].role");
  expect_field_error(R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})",
                     "messages[0].content[0].type");
  expect_field_error(R"({"messages":[]})", "messages");
  expect_field_error(R"({"model":"x"})", "messages");
  expect_field_error(R"({"messages":[{"role":"user","content":5}]})", "messages[0].content");
}

TEST_F(RequestParse, BrokenBodiesAre400WithoutAField) {
  for (const char* body : {"", "{", "[1,2]", "\"x\"", "{\"messages\":[}", "{\"a\":\"\xff\xfe\"}"}) {
    ApiError e = chat_error(body);
    EXPECT_EQ(e.status, 400) << body;
    EXPECT_EQ(e.code, "invalid_json") << body;
  }
}

TEST_F(RequestParse, ContextLengthIsCheckedAgainstThePromptAndMaxTokens) {
  ApiError e = chat_error(std::string("{") + kHello + R"(,"max_tokens":510})");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.code, "context_length_exceeded");
  std::string long_text(600, 'a');
  e = chat_error(R"({"messages":[{"role":"user","content":")" + long_text + "\"}]}");
  EXPECT_EQ(e.code, "context_length_exceeded");
  EXPECT_EQ(e.param, "messages");
}

TEST_F(RequestParse, CompletionPromptsInEveryForm) {
  ParsedRequest p = parse_completion(R"({"prompt":"ab","logprobs":2})", m.ctx);
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].prompt_ids, (std::vector<int32_t>{3 + 'a', 3 + 'b'}));
  EXPECT_EQ(p.requests[0].max_tokens, 16);  // OpenAI's default for completions
  EXPECT_EQ(p.requests[0].logprobs, 2);
  EXPECT_TRUE(p.logprobs);
  p = parse_completion(R"({"prompt":["a","b"],"max_tokens":4})", m.ctx);
  ASSERT_EQ(p.requests.size(), 2u);
  EXPECT_EQ(p.requests[1].prompt_ids, std::vector<int32_t>{3 + 'b'});
  EXPECT_EQ(p.requests[1].max_tokens, 4);
  p = parse_completion(R"({"prompt":[5,6,7]})", m.ctx);
  EXPECT_EQ(p.requests[0].prompt_ids, (std::vector<int32_t>{5, 6, 7}));
  p = parse_completion(R"({"prompt":[[5],[6,7]]})", m.ctx);
  EXPECT_EQ(p.requests.size(), 2u);
  ApiError e = api_error_of([&] { parse_completion(R"({"prompt":[5,99999]})", m.ctx); });
  EXPECT_EQ(e.param, "prompt[1]");
  e = api_error_of([&] { parse_completion(R"({"prompt":{"a":1}})", m.ctx); });
  EXPECT_EQ(e.param, "prompt");
  e = api_error_of([&] { parse_completion(R"({"prompt":"a","echo":true})", m.ctx); });
  EXPECT_EQ(e.param, "echo");
  e = api_error_of([&] { parse_completion(R"({"max_tokens":3})", m.ctx); });
  EXPECT_EQ(e.param, "prompt");
}

TEST_F(RequestParse, AnthropicMessages) {
  ParsedRequest p = parse_messages(R"({"model":"m","max_tokens":9,"system":"be brief",
    "messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],
    "stop_sequences":["END"],"temperature":0.2,"stream":true})",
                                   m.ctx);
  EXPECT_EQ(p.api, Api::kMessages);
  EXPECT_EQ(p.requests[0].max_tokens, 9);
  EXPECT_EQ(p.requests[0].stop_strings, std::vector<std::string>{"END"});
  EXPECT_TRUE(p.stream);
  std::string text = m.tokenizer->decode(p.requests[0].prompt_ids, false);
  EXPECT_NE(text.find("system\nbe brief"), std::string::npos) << text;
  ApiError e = api_error_of(
      [&] { parse_messages(R"({"messages":[{"role":"user","content":"x"}]})", m.ctx); });
  EXPECT_EQ(e.param, "max_tokens");
  e = api_error_of([&] {
    parse_messages(R"({"max_tokens":5,"messages":[{"role":"system","content":"x"}]})", m.ctx);
  });
  EXPECT_EQ(e.param, "messages[0].role");
}

TEST(JsonFields, IntegersAcceptWholeFloatsAndRejectOverflow) {
  nlohmann::json body = nlohmann::json::parse(R"({"a":2.0,"b":18446744073709551615,"c":true})");
  EXPECT_EQ(int_field(body, "a", 0, 10, 0), 2);
  EXPECT_EQ(api_error_of([&] { int_field(body, "b", 0, 10, 0); }).param, "b");
  EXPECT_EQ(api_error_of([&] { int_field(body, "c", 0, 10, 0); }).param, "c");
  EXPECT_EQ(int_field(body, "absent", 0, 10, 7), 7);
}

}  // namespace
}  // namespace cairn::server
