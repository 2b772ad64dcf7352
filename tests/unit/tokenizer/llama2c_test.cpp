// The llama2.c tokenizer of stories260K. Expected ids come from llama2.c's own
// algorithm (greedy merge by score over the tok512.bin table, dummy prefix),
// worked through independently of this implementation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace cairn::tok {
namespace {

const std::string kDir = std::string(CAIRN_SHARED_DIR) + "/models/stories260K";

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class Llama2cTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kDir + "/tok512.bin")) GTEST_SKIP() << "missing " << kDir;
    tok = load_tokenizer(kDir + "/tok512.bin");
  }
  std::unique_ptr<Tokenizer> tok;
};

using Ids = std::vector<int32_t>;

TEST_F(Llama2cTest, Metadata) {
  EXPECT_EQ(tok->vocab_size(), 512);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_ids(), Ids{2});
  EXPECT_EQ(tok->piece(403), " Once");
  EXPECT_TRUE(tok->is_special(1));
  EXPECT_FALSE(tok->is_special(403));
}

TEST_F(Llama2cTest, FolderFindsTheTokenizerBesideTheCheckpoint) {
  auto from_folder = load_tokenizer(kDir);
  EXPECT_EQ(from_folder->vocab_size(), 512);
  EXPECT_EQ(from_folder->encode("Once upon a time"), tok->encode("Once upon a time"));
}

TEST_F(Llama2cTest, KnownIds) {
  EXPECT_EQ(tok->encode("Once upon a time"), (Ids{403, 407, 261, 378}));
  EXPECT_EQ(tok->encode("Lily's mom said, \"Hi!\""),
            (Ids{317, 439, 419, 357, 336, 432, 313, 440, 417, 443, 436}));
  // é is a piece; the emoji falls back to its four UTF-8 bytes (id = byte + 3).
  EXPECT_EQ(tok->encode("h\xC3\xA9llo \xF0\x9F\x98\x80"),
            (Ids{270, 485, 306, 414, 410, 243, 162, 155, 131}));
  EXPECT_EQ(tok->encode("a  b"), (Ids{261, 410, 268}));
  EXPECT_EQ(tok->encode(""), Ids{});
  EXPECT_EQ(tok->encode("Once", {.add_bos = true}), (Ids{1, 403}));
  EXPECT_EQ(tok->encode("Once", {.add_special_tokens = true}), (Ids{1, 403}));
}

TEST_F(Llama2cTest, DecodeStripsTheFirstSpace) {
  EXPECT_EQ(tok->decode(Ids{1, 403, 407}), "Once upon");
  EXPECT_EQ(tok->decode(Ids{1, 243, 162, 155, 131}), "\xF0\x9F\x98\x80");
  EXPECT_EQ(tok->decode(Ids{243, 162}), "\xEF\xBF\xBD");  // an incomplete character
}

TEST_F(Llama2cTest, ExpectedGreedyTextRoundTrips) {
  const std::string text = read_file(kDir + "/expected-greedy-200.txt");
  ASSERT_FALSE(text.empty());
  const Ids ids = tok->encode(text, {.add_bos = true});
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 403);  // " Once"
  EXPECT_EQ(tok->decode(ids), text);
  StreamingDetokenizer stream(*tok);
  std::string streamed;
  for (int32_t id : ids) streamed += stream.feed(id);
  streamed += stream.flush();
  EXPECT_EQ(streamed, text);
}

TEST(Llama2cErrors, TruncatedFileNamesThePath) {
  const std::string good = read_file(kDir + "/tok512.bin");
  if (good.empty()) GTEST_SKIP() << "missing " << kDir;
  const std::string path = ::testing::TempDir() + "/truncated_tok.bin";
  std::ofstream(path, std::ios::binary) << good.substr(0, 1000);
  try {
    load_tokenizer(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cairn::tok
