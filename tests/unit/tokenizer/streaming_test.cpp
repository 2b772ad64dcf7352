// StreamingDetokenizer against one-shot decode on the llama2.c vocabulary
// (byte-fallback runs, the first-space rule, invalid byte runs).
#include <gtest/gtest.h>

#include <filesystem>

#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace cairn::tok {
namespace {

const std::string kTok = std::string(CAIRN_SHARED_DIR) + "/models/stories260K/tok512.bin";

TEST(Streaming, EmitsOnlyCompleteCharacters) {
  if (!std::filesystem::exists(kTok)) GTEST_SKIP() << "missing " << kTok;
  auto tok = load_tokenizer(kTok);
  StreamingDetokenizer s(*tok);
  EXPECT_EQ(s.feed(1), "");        // BOS is skipped
  EXPECT_EQ(s.feed(403), "Once");  // first space dropped
  EXPECT_EQ(s.feed(410), " ");
  EXPECT_EQ(s.feed(243), "");  // 0xF0: waits for the rest of the emoji
  EXPECT_EQ(s.feed(162), "");
  EXPECT_EQ(s.feed(155), "");
  EXPECT_EQ(s.feed(131), "\xF0\x9F\x98\x80");
  EXPECT_EQ(s.feed(243), "");
  EXPECT_EQ(s.feed(403), std::string(kReplacementChar) + " Once");
  EXPECT_EQ(s.feed(243), "");
  EXPECT_EQ(s.flush(), std::string(kReplacementChar));
}

TEST(Streaming, EqualsOneShotOnEveryPrefix) {
  if (!std::filesystem::exists(kTok)) GTEST_SKIP() << "missing " << kTok;
  auto tok = load_tokenizer(kTok);
  const std::vector<int32_t> ids = {1, 410, 243, 162, 155, 131, 162, 403, 485, 3, 200, 2, 407};
  for (size_t n = 0; n <= ids.size(); ++n) {
    std::span<const int32_t> prefix(ids.data(), n);
    StreamingDetokenizer s(*tok);
    std::string streamed;
    for (int32_t id : prefix) {
      const std::string piece = s.feed(id);
      EXPECT_TRUE(is_valid_utf8(piece));
      streamed += piece;
    }
    streamed += s.flush();
    EXPECT_EQ(streamed, tok->decode(prefix)) << "prefix " << n;
  }
}

}  // namespace
}  // namespace cairn::tok
