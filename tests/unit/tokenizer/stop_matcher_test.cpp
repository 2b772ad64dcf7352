#include "tokenizer/stop_matcher.h"

#include <gtest/gtest.h>

namespace cairn::tok {
namespace {

TEST(StopMatcher, HoldsBackAPossibleStartAndReleasesIt) {
  StopMatcher m({"</answer>", "STOP"});
  auto r = m.feed("Hello </an");
  EXPECT_EQ(r.text, "Hello ");
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(m.held(), "</an");
  r = m.feed("other>");  // "</another>" cannot become "</answer>"
  EXPECT_EQ(r.text, "</another>");
  r = m.feed(" ST");
  EXPECT_EQ(r.text, " ");
  r = m.feed("OP here");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.stop_index, 1);
  EXPECT_EQ(r.text, "");
  EXPECT_TRUE(m.feed("more").text.empty());
  EXPECT_EQ(m.flush(), "");
}

TEST(StopMatcher, StopInsideOnePieceGivesTheTextBefore) {
  StopMatcher m({"\n\n"});
  const auto r = m.feed("line one\n\nline two");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "line one");
}

TEST(StopMatcher, EarliestStopWins) {
  StopMatcher m({"world", "lo"});
  const auto r = m.feed("hello world");
  EXPECT_EQ(r.stop_index, 1);
  EXPECT_EQ(r.text, "hel");
}

TEST(StopMatcher, FlushReleasesAPartialMatch) {
  StopMatcher m({"abc"});
  EXPECT_EQ(m.feed("xxab").text, "xx");
  EXPECT_EQ(m.flush(), "ab");
}

TEST(StopMatcher, OverlappingPrefixes) {
  StopMatcher m({"aab"});
  EXPECT_EQ(m.feed("a").text, "");
  EXPECT_EQ(m.feed("a").text, "");
  EXPECT_EQ(m.feed("a").text, "a");  // "aaa": only the last "aa" may still start "aab"
  const auto r = m.feed("b");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "");
}

TEST(StopMatcher, NoStopsPassesEverythingThrough) {
  StopMatcher m({});
  EXPECT_EQ(m.feed("anything").text, "anything");
  StopMatcher empty({""});
  EXPECT_EQ(empty.feed("x").text, "x");
}

TEST(StopMatcher, MultiByteCharactersAreNeverSplit) {
  StopMatcher m({"\xE2\x9C\x85 done"});  // "✅ done"
  EXPECT_EQ(m.feed("ok \xE2\x9C\x85").text, "ok ");
  EXPECT_EQ(m.feed(" do").text, "");
  EXPECT_EQ(m.feed("g").text, "\xE2\x9C\x85 dog");
}

}  // namespace
}  // namespace cairn::tok
