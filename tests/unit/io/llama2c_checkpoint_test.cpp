// llama2.c checkpoints written by the test: header checks, size checks, and the
// layout of the arrays (values placed where the format says).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/error.h"
#include "io/llama2c_checkpoint.h"
#include "temp_dir.h"

namespace cairn::io {
namespace {

using test::expect_error;
using test::TempDir;
using test::write_bytes;

// dim 4, hidden 6, 1 layer, 2 heads, 1 kv head, vocab v, seq_len 3; floats 0, 1, 2, ...
std::string checkpoint(int32_t vocab, bool drop_last) {
  int32_t hdr[7] = {4, 6, 1, 2, 1, vocab, 3};
  size_t v = static_cast<size_t>(vocab < 0 ? -vocab : vocab);
  size_t n = v * 4 + 4 + 16 + 2 * 8 + 16 + 4 + 3 * 24 + 4 + 3 * 2;
  if (vocab < 0) n += v * 4;
  std::vector<float> f(n);
  for (size_t i = 0; i < n; ++i) f[i] = static_cast<float>(i);
  std::string s(28 + n * 4, '\0');
  std::memcpy(s.data(), hdr, 28);
  std::memcpy(s.data() + 28, f.data(), n * 4);
  if (drop_last) s.resize(s.size() - 4);
  return s;
}

TEST(Llama2cCheckpoint, LayoutAndSharedClassifier) {
  TempDir dir;
  write_bytes(dir.file("m.bin"), checkpoint(5, false));
  ASSERT_TRUE(is_llama2c_checkpoint(dir.file("m.bin")));
  Llama2cCheckpoint c = load_llama2c_checkpoint(dir.file("m.bin"));
  EXPECT_EQ(c.header.vocab_size, 5);
  EXPECT_TRUE(c.header.shared_classifier);
  EXPECT_EQ(c.token_embedding.data<float>()[0], 0.0f);
  EXPECT_EQ(c.rms_att.data<float>()[0], 20.0f);  // after 5 × 4 embedding floats
  EXPECT_EQ(c.wq.data<float>()[0], 24.0f);
  EXPECT_TRUE(c.wk.shape() == Shape({1, 2, 4}));
  EXPECT_EQ(c.classifier.raw(), c.token_embedding.raw());
}

TEST(Llama2cCheckpoint, NegativeVocabMeansOwnClassifier) {
  TempDir dir;
  write_bytes(dir.file("m.bin"), checkpoint(-5, false));
  Llama2cCheckpoint c = load_llama2c_checkpoint(dir.file("m.bin"));
  EXPECT_FALSE(c.header.shared_classifier);
  EXPECT_NE(c.classifier.raw(), c.token_embedding.raw());
  EXPECT_TRUE(c.classifier.shape() == Shape({5, 4}));
}

TEST(Llama2cCheckpoint, TruncatedFileNamesPath) {
  TempDir dir;
  write_bytes(dir.file("m.bin"), checkpoint(5, true));
  EXPECT_FALSE(is_llama2c_checkpoint(dir.file("m.bin")));
  expect_error([&] { load_llama2c_checkpoint(dir.file("m.bin")); }, {"m.bin", "header implies"});
  write_bytes(dir.file("tiny.bin"), "abc");
  expect_error([&] { load_llama2c_checkpoint(dir.file("tiny.bin")); }, {"tiny.bin", "truncated"});
}

TEST(Llama2cCheckpoint, BadHeaderFieldIsNamed) {
  TempDir dir;
  std::string s = checkpoint(5, false);
  int32_t bad_heads = 3;  // dim 4 is not a multiple of 3
  std::memcpy(s.data() + 12, &bad_heads, 4);
  write_bytes(dir.file("m.bin"), s);
  expect_error([&] { load_llama2c_checkpoint(dir.file("m.bin")); }, {"m.bin", "n_heads"});
}

TEST(Llama2cCheckpoint, TokenizerFileIsNotACheckpoint) {
  std::string tok = std::string(CAIRN_SHARED_DIR) + "/models/stories260K/tok512.bin";
  std::string model = std::string(CAIRN_SHARED_DIR) + "/models/stories260K/stories260K.bin";
  EXPECT_FALSE(is_llama2c_checkpoint(tok));
  EXPECT_TRUE(is_llama2c_checkpoint(model));
}

}  // namespace
}  // namespace cairn::io
