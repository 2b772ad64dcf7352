// GGUF vocabularies against llama.cpp's own test vectors (the oracle: ids that
// llama.cpp produced for each case, no BOS, special tokens not parsed).
#include <gtest/gtest.h>

#include <filesystem>

#include "tokenizer/tokenizer.h"
#include "vectors.h"

namespace cairn::tok {
namespace {

using testing::read_vectors;
using testing::vocab_dir;

std::string show(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += std::to_string(id) + " ";
  return s;
}

class LlamaCppVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(LlamaCppVectors, MatchEveryCase) {
  const std::string path = vocab_dir() + "/ggml-vocab-" + GetParam() + ".gguf";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "missing " << path << ": run tools/llama_cpp_bundle.sh (scripts/setup.sh)";
  auto tok = load_tokenizer(path);
  const auto cases = read_vectors(path);
  ASSERT_GE(cases.size(), 40u);
  int n_ok = 0;
  for (const auto& c : cases) {
    const auto ids = tok->encode(c.text);
    if (ids == c.ids) {
      ++n_ok;
    } else {
      ADD_FAILURE() << GetParam() << " case \"" << c.text << "\"\n got      " << show(ids)
                    << "\n expected " << show(c.ids);
    }
  }
  EXPECT_EQ(n_ok, static_cast<int>(cases.size()));
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, LlamaCppVectors,
                         ::testing::Values("llama-spm", "llama-bpe", "qwen2", "qwen35", "gpt-2",
                                           "phi-3", "gemma-4", "starcoder", "refact", "command-r",
                                           "mpt", "falcon"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(GgufVocab, TinyRandomLlama2) {
  const std::string path =
      std::string(CAIRN_SHARED_DIR) + "/models/tiny-random-gguf/llama-2-tiny-random.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "missing " << path;
  auto tok = load_tokenizer(path);
  EXPECT_EQ(tok->vocab_size(), 32000);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_ids(), std::vector<int32_t>{2});
  // As node-llama-cpp (llama.cpp) tokenizes this file: "▁Once ▁upon ▁a ▁time".
  EXPECT_EQ(tok->encode("Once upon a time"), (std::vector<int32_t>{9038, 2501, 263, 931}));
  EXPECT_EQ(tok->encode("Once upon a time", {.add_special_tokens = true}),
            (std::vector<int32_t>{1, 9038, 2501, 263, 931}));
  EXPECT_EQ(tok->decode(std::vector<int32_t>{1, 9038, 2501, 263, 931}), "Once upon a time");
}

}  // namespace
}  // namespace cairn::tok
