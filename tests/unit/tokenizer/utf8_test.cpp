#include "tokenizer/utf8.h"

#include <gtest/gtest.h>

namespace cairn::tok {
namespace {

std::string lossy(std::string_view bytes) {
  std::string out;
  append_utf8_lossy(bytes, true, out);
  return out;
}

const std::string R(kReplacementChar);

TEST(Utf8, LossyRepairFollowsMaximalSubparts) {
  EXPECT_EQ(lossy("abc"), "abc");
  EXPECT_EQ(lossy("\xC3\xA9"), "\xC3\xA9");
  EXPECT_EQ(lossy("\x80"), R);
  EXPECT_EQ(lossy("\xE2\x82"), R);  // truncated 3-byte sequence: one U+FFFD
  EXPECT_EQ(lossy("\xE2\x82"
                  "a"),
            R + "a");
  EXPECT_EQ(lossy("\xED\xA0\x80"), R + R + R);  // a surrogate: each byte invalid
  EXPECT_EQ(lossy("\xF0\x9F\x98"), R);
  EXPECT_EQ(lossy("\xC0\xAF"), R + R);  // overlong lead bytes
  EXPECT_EQ(lossy("\xF5"), R);
}

TEST(Utf8, NonFinalHoldsBackAnIncompleteCharacter) {
  std::string out;
  EXPECT_EQ(append_utf8_lossy("a\xF0\x9F", false, out), 1u);
  EXPECT_EQ(out, "a");
}

TEST(Utf8, CodePoints) {
  std::string s;
  append_utf8(0x1F600, s);
  EXPECT_EQ(s, "\xF0\x9F\x98\x80");
  size_t pos = 0;
  EXPECT_EQ(next_code_point(s, pos), 0x1F600u);
  EXPECT_EQ(pos, 4u);
  EXPECT_TRUE(is_valid_utf8(s));
  EXPECT_FALSE(is_valid_utf8("\xFF"));
}

}  // namespace
}  // namespace cairn::tok
