// Rope tables against the inverse frequencies and attention scaling transformers
// itself computed for the fixtures (tools/make_fixtures.py records them in
// reference.json), for default, linear, llama3, yarn and longrope.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "io/json_reader.h"
#include "model/config.h"
#include "model/rope.h"

namespace cairn {
namespace {

std::string fixture(const std::string& family) {
  return std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/" + family + "/f32";
}

// The values transformers recorded under rope key `key` of the family's reference.json.
nlohmann::json recorded(const std::string& family, const std::string& key) {
  nlohmann::json j = io::read_json_file(fixture(family) + "/reference.json");
  return j.at("rope").at(key);
}

void expect_table(const RopeTable& t, const nlohmann::json& inv_freq, double attention_factor) {
  ASSERT_EQ(t.inv_freq.size(), inv_freq.size());
  for (size_t i = 0; i < t.inv_freq.size(); ++i) {
    double want = inv_freq[i].get<double>();
    EXPECT_NEAR(t.inv_freq[i], want, 2e-7 * want + 1e-12) << "inv_freq[" << i << "]";
  }
  EXPECT_NEAR(t.attention_factor, attention_factor, 1e-6);
}

RopeTable global_table(const ModelConfig& c) {
  return make_rope_table(c.rope, c.head_dim, c.max_position_embeddings);
}

TEST(Rope, Llama3MatchesTransformers) {
  ModelConfig c = parse_hf_config(fixture("llama"));
  expect_table(global_table(c), recorded("llama", "model.rotary_emb.inv_freq"), 1.0);
}

TEST(Rope, YarnMatchesTransformers) {
  ModelConfig c = parse_hf_config(fixture("qwen2"));
  double af = recorded("qwen2", "model.rotary_emb.attention_scaling").get<double>();
  EXPECT_GT(af, 1.1);
  expect_table(global_table(c), recorded("qwen2", "model.rotary_emb.inv_freq"), af);
}

TEST(Rope, LinearMatchesTransformers) {
  ModelConfig c = parse_hf_config(fixture("qwen3"));
  expect_table(global_table(c), recorded("qwen3", "model.rotary_emb.inv_freq"), 1.0);
}

TEST(Rope, Gemma3LocalAndGlobalTables) {
  ModelConfig c = parse_hf_config(fixture("gemma3_text"));
  expect_table(global_table(c), recorded("gemma3_text", "model.rotary_emb.full_attention_inv_freq"),
               1.0);
  RopeTable local = make_rope_table(c.rope_local, c.head_dim, c.max_position_embeddings);
  expect_table(local, recorded("gemma3_text", "model.rotary_emb.sliding_attention_inv_freq"), 1.0);
}

TEST(Rope, LongropeLongFactorsAndPartialRotary) {
  ModelConfig c = parse_hf_config(fixture("phi3"));
  RopeTable t = global_table(c);
  EXPECT_EQ(t.rotary_dim, 8);  // head_dim 16 × partial_rotary_factor 0.5
  double af = recorded("phi3", "model.rotary_emb.attention_scaling").get<double>();
  expect_table(t, recorded("phi3", "model.rotary_emb.long_inv_freq"), af);
}

TEST(Rope, LongropeShortFactorsWhenContextIsOriginal) {
  ModelConfig c = parse_hf_config(fixture("phi3"));
  RopeTable t = make_rope_table(c.rope, c.head_dim, c.rope.original_max_position_embeddings);
  expect_table(t, recorded("phi3", "model.rotary_emb.original_inv_freq"), 1.0);
}

TEST(Rope, BadPartialRotaryOrFactorLengthIsAnError) {
  RopeSpec s;
  s.partial_rotary_factor = 0.3;  // 16 × 0.3 = 4.8 → 4: fine; 0.1 → 1: odd
  EXPECT_NO_THROW(make_rope_table(s, 16, 128));
  s.partial_rotary_factor = 0.1;
  EXPECT_THROW(make_rope_table(s, 16, 128), Error);
  RopeSpec l;
  l.type = "longrope";
  l.original_max_position_embeddings = 64;
  l.long_factor = {1.0, 2.0};
  EXPECT_THROW(make_rope_table(l, 16, 128), Error);
}

}  // namespace
}  // namespace cairn
