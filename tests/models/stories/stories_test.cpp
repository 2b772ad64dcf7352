// stories260K (a trained llama2.c checkpoint in ../shared): greedy decoding from
// BOS must print exactly what llama2.c's own runner printed for 200 steps: it
// runs the model at positions 0..199 and prints each of the 200 sampled tokens.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "kv/contiguous_cache.h"
#include "model/config.h"
#include "model/registry.h"
#include "tokenizer/tokenizer.h"

namespace cairn {
namespace {

const std::string kDir = std::string(CAIRN_SHARED_DIR) + "/models/stories260K";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string t = s.str();
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t;
}

// Greedy ids after BOS, `n_steps` of them, through the contiguous cache.
std::vector<int32_t> greedy_from_bos(Model& m, int n_steps) {
  ContiguousKvCache kv(m.config(), 1, n_steps + 1);
  int64_t vocab = m.config().vocab_size;
  Tensor logits = Tensor::empty({1, vocab}, DType::kF32);
  std::vector<int32_t> out;
  int32_t tok = 1;  // BOS
  for (int32_t pos = 0; pos < n_steps; ++pos) {
    ForwardBatch b;
    b.tokens = {tok};
    b.positions = {pos};
    b.spans = {{0, 0, 1, true}};
    m.forward(b, kv, logits);
    const float* l = logits.data<float>();
    tok = static_cast<int32_t>(std::max_element(l, l + vocab) - l);
    out.push_back(tok);
  }
  return out;
}

TEST(Stories260K, LoadsFolderAsLlama2cCheckpoint) {
  auto m = load_model(kDir, {});
  const ModelConfig& c = m->config();
  EXPECT_EQ(c.format, "llama2c");
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.max_position_embeddings, 512);
  EXPECT_TRUE(c.rope_interleaved);
}

TEST(Stories260K, GreedyTwoHundredStepsMatchLlama2c) {
  auto m = load_model(kDir, {});
  auto tok = tok::load_tokenizer(kDir);
  std::vector<int32_t> ids = greedy_from_bos(*m, 200);
  std::string text = tok->decode(ids);
  if (!text.empty() && text[0] == ' ') text.erase(0, 1);  // the runner drops it after BOS
  EXPECT_EQ(text, read_text(kDir + "/expected-greedy-200.txt"));
}

TEST(Stories260K, SameGreedyWhenFileNamedDirectly) {
  auto a = load_model(kDir, {});
  auto b = load_model(kDir + "/stories260K.bin", {});
  EXPECT_EQ(greedy_from_bos(*a, 20), greedy_from_bos(*b, 20));
}

}  // namespace
}  // namespace cairn
