// The `cairn tokenize` verb on the stories260K tokenizer (ids as in llama2c_test).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "cli/tokenize.h"
#include "core/error.h"

namespace cairn::cli {
namespace {

const std::string kTok = std::string(CAIRN_SHARED_DIR) + "/models/stories260K/tok512.bin";

TEST(TokenizeCli, EncodesAndDecodes) {
  if (!std::filesystem::exists(kTok)) GTEST_SKIP() << "missing " << kTok;
  std::ostringstream out;
  run_tokenize({.model = kTok, .text = "Once upon a time", .ids_only = true}, out);
  EXPECT_EQ(out.str(), "403 407 261 378\n");
  out.str("");
  run_tokenize({.model = kTok, .text = "Once", .bos = true}, out);
  EXPECT_EQ(out.str(), "       1 \"\\n<s>\\n\"\n     403 \" Once\"\n2 tokens\n");
  out.str("");
  run_tokenize({.model = kTok, .decode_ids = {403, 407}}, out);
  EXPECT_EQ(out.str(), "Once upon\n");
  EXPECT_THROW(run_tokenize({.model = kTok, .decode_ids = {9999}}, out), Error);
  EXPECT_THROW(run_tokenize({.text = "x"}, out), Error);
}

TEST(TokenizeCli, ParsesTheCommandLine) {
  if (!std::filesystem::exists(kTok)) GTEST_SKIP() << "missing " << kTok;
  CLI::App app("test");
  register_tokenize(app);
  std::stringstream captured;
  auto* old = std::cout.rdbuf(captured.rdbuf());
  app.parse("tokenize --model " + kTok + " --ids-only \"Once upon\"", false);
  std::cout.rdbuf(old);
  EXPECT_EQ(captured.str(), "403 407\n");
}

}  // namespace
}  // namespace cairn::cli
