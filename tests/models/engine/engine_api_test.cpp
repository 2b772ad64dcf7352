// The engine's API on stories260K (trained, with its tokenizer): events and
// text, stop ids and strings, seeds, logprobs, usage, cancellation freeing
// pages, a full queue, and bad input refused at submit without disturbing
// anything else.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "engine_test_util.h"
#include "tokenizer/tokenizer.h"

namespace cairn::test {
namespace {

class EngineApi : public ::testing::Test {
 protected:
  // Loaded by the first test (in SetUp, so that a missing file fails the tests
  // rather than skipping them) and kept for the rest.
  void SetUp() override {
    if (model_ == nullptr) model_ = load_model(kStoriesDir, {}).release();
    if (tokenizer_ == nullptr) tokenizer_ = tok::load_tokenizer(kStoriesDir).release();
  }
  static Request story(int32_t max_tokens, float temperature = 0.0f) {
    Request r;
    r.prompt_ids = {1};  // BOS: the model tells a story
    r.max_tokens = max_tokens;
    r.sampling.temperature = temperature;
    return r;
  }
  static inline Model* model_ = nullptr;
  static inline tok::Tokenizer* tokenizer_ = nullptr;
};

TEST_F(EngineApi, StreamsTextThatEqualsTheDecodedIds) {
  Engine e(*model_, tokenizer_, {});
  auto s = e.submit(story(60));
  std::string streamed;
  std::vector<int32_t> ids;
  Event ev;
  int n_events = 0;
  while (s->next(ev, std::chrono::seconds(30))) {
    ++n_events;
    streamed += ev.text;
    for (auto& t : ev.tokens) ids.push_back(t.id);
    if (ev.finished) {
      EXPECT_EQ(ev.finish, FinishReason::kLength);
      EXPECT_EQ(ev.usage.prompt_tokens, 1);
      EXPECT_EQ(ev.usage.completion_tokens, 60);
    }
  }
  ASSERT_EQ(ids.size(), 60u);
  EXPECT_GT(n_events, 1);
  std::string decoded = tokenizer_->decode(ids);
  EXPECT_EQ(streamed, decoded);
  EXPECT_NE(streamed.find("Once upon a time"), std::string::npos) << streamed;
}

TEST_F(EngineApi, StopStringEndsTheTextBeforeIt) {
  Engine e(*model_, tokenizer_, {});
  const Event full = e.submit(story(60))->collect();
  const size_t at = full.text.find(" a time");
  ASSERT_NE(at, std::string::npos);
  Request r = story(60);
  r.stop_strings = {"zzz", " a time"};
  const Event stopped = e.submit(r)->collect();
  EXPECT_EQ(stopped.finish, FinishReason::kStop);
  EXPECT_EQ(stopped.stop_index, 1);
  EXPECT_EQ(stopped.text, full.text.substr(0, at));
  EXPECT_LT(stopped.tokens.size(), 60u);
}

TEST_F(EngineApi, StopIdEndsGenerationAndMinTokensHoldsItBack) {
  Engine e(*model_, tokenizer_, {});
  const Event full = e.submit(story(30))->collect();
  const int32_t third = full.tokens[2].id;
  Request r = story(30);
  r.stop_ids = {third};
  const Event stopped = e.submit(r)->collect();
  EXPECT_EQ(stopped.finish, FinishReason::kStop);
  EXPECT_EQ(stopped.tokens.back().id, third);
  EXPECT_LE(stopped.tokens.size(), 3u);
  r.processors.min_tokens = 10;
  const Event held = e.submit(r)->collect();
  ASSERT_GE(held.tokens.size(), 10u);
  for (size_t i = 0; i + 1 < 10; ++i) EXPECT_NE(held.tokens[i].id, third);
}

TEST_F(EngineApi, SeedsAreReportedAndReproduce) {
  Engine e(*model_, tokenizer_, {});
  auto a = e.submit(story(40, 1.0f));
  const uint64_t chosen = a->seed();
  const Event first = a->collect();
  Request r = story(40, 1.0f);
  r.seed = chosen;
  const Event again = e.submit(r)->collect();
  ASSERT_EQ(first.tokens.size(), again.tokens.size());
  for (size_t i = 0; i < first.tokens.size(); ++i)
    EXPECT_EQ(first.tokens[i].id, again.tokens[i].id);
  r.seed = chosen + 1;
  EXPECT_NE(e.submit(r)->collect().text, first.text);
}

TEST_F(EngineApi, LogprobsAreOfTheDistributionSampledFrom) {
  Engine e(*model_, tokenizer_, {});
  Request r = story(10);
  r.logprobs = 5;
  const Event ev = e.submit(r)->collect();
  for (const TokenOut& t : ev.tokens) {
    ASSERT_EQ(t.top.size(), 5u);
    EXPECT_EQ(t.top[0].id, t.id);  // greedy: the most likely
    EXPECT_EQ(t.top[0].logprob, t.logprob);
    for (size_t i = 1; i < 5; ++i) EXPECT_LE(t.top[i].logprob, t.top[i - 1].logprob);
    EXPECT_LE(t.logprob, 0.0f);
  }
}

TEST_F(EngineApi, CancellingMidDecodeEndsTheStreamAndFreesItsPages) {
  EngineOptions o;
  o.prefix_cache_bytes = 0;
  Engine e(*model_, tokenizer_, o);
  auto s = e.submit(story(400));
  Event ev;
  ASSERT_TRUE(s->next(ev, std::chrono::seconds(30)));
  e.cancel(s->id());
  Event rest = s->collect();
  EXPECT_TRUE(rest.finished);
  EXPECT_EQ(rest.finish, FinishReason::kCancelled);
  for (int i = 0; i < 100 && e.stats().kv_pages_used > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(e.stats().kv_pages_used, 0);
  EXPECT_EQ(e.n_in_flight(), 0);
}

TEST_F(EngineApi, AFullQueueIsRefusedAtOnce) {
  EngineOptions o;
  o.max_seqs = 1;
  o.max_batch_tokens = 8;
  o.max_queue = 2;
  Engine e(*model_, tokenizer_, o);
  std::vector<std::shared_ptr<RequestStream>> accepted;
  int refused = 0;
  for (int i = 0; i < 12; ++i) {
    try {
      accepted.push_back(e.submit(story(300)));
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), ErrorCode::kQueueFull);
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  e.cancel_all();
  for (auto& s : accepted) EXPECT_TRUE(s->collect().finished);
}

TEST_F(EngineApi, BadInputIsAClearErrorAtSubmit) {
  Engine e(*model_, tokenizer_, {});
  auto refused = [&](Request r, ErrorCode code, const char* names) {
    try {
      e.submit(std::move(r));
      ADD_FAILURE() << "accepted; expected an error naming " << names;
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), code) << err.what();
      EXPECT_NE(std::string(err.what()).find(names), std::string::npos) << err.what();
    }
  };
  Request empty = story(5);
  empty.prompt_ids.clear();
  refused(empty, ErrorCode::kInvalidArgument, "prompt");
  refused(story(0), ErrorCode::kInvalidArgument, "max_tokens");
  refused(story(-3), ErrorCode::kInvalidArgument, "max_tokens");
  Request too_long = story(5);
  too_long.prompt_ids.assign(600, 5);
  refused(too_long, ErrorCode::kContextLength, "context length");
  Request unknown = story(5);
  unknown.prompt_ids = {1, 512};
  refused(unknown, ErrorCode::kInvalidArgument, "vocabulary");
  for (float top_p : {0.0f, 1.5f, -0.1f}) {
    Request r = story(5, 1.0f);
    r.sampling.top_p = top_p;
    refused(r, ErrorCode::kInvalidArgument, "top_p");
  }
  refused(story(5, -1.0f), ErrorCode::kInvalidArgument, "temperature");
  Request lp = story(5);
  lp.logprobs = 21;
  refused(lp, ErrorCode::kInvalidArgument, "logprobs");
  // Nothing else was disturbed.
  const Event ok = e.submit(story(8))->collect();
  EXPECT_EQ(ok.tokens.size(), 8u);
  EXPECT_EQ(e.stats().requests_submitted, 1);
}

}  // namespace
}  // namespace cairn::test
