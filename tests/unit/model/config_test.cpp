// config.json parsing on files the test writes: both rope formats, layer kinds,
// token ids, and errors that name the file and field.
#include <gtest/gtest.h>

#include "core/error.h"
#include "model/config.h"
#include "temp_dir.h"

namespace cairn {
namespace {

using test::expect_error;
using test::TempDir;
using test::write_bytes;

const char* kBase = R"("vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 4,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 64,
  "max_position_embeddings": 2048)";

ModelConfig parse(const TempDir& dir, const std::string& model_type, const std::string& extra) {
  write_bytes(dir.file("config.json"), "{\"model_type\": \"" + model_type + "\", " + kBase +
                                           (extra.empty() ? "" : ", " + extra) + "}");
  return parse_hf_config(dir.str());
}

TEST(Config, ReadsCoreFieldsAndDefaults) {
  TempDir dir;
  ModelConfig c = parse(dir, "llama", R"("torch_dtype": "bfloat16")");
  EXPECT_EQ(c.n_layers, 4);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_EQ(c.n_kv_heads, 2);
  EXPECT_EQ(c.torch_dtype, "bfloat16");
  EXPECT_EQ(c.rope.type, "default");
  EXPECT_EQ(c.rope.theta, 10000.0);
  EXPECT_EQ(c.layer_window, std::vector<int32_t>(4, 0));
  EXPECT_FALSE(c.tie_word_embeddings);
}

TEST(Config, LegacyAndNewRopeFormatsAgree) {
  TempDir a, b;
  ModelConfig old = parse(a, "llama", R"("rope_theta": 500000.0, "rope_scaling": {"rope_type":
    "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192})");
  ModelConfig now = parse(b, "llama", R"("rope_parameters": {"rope_type": "llama3",
    "rope_theta": 500000.0, "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192})");
  for (const ModelConfig* c : {&old, &now}) {
    EXPECT_EQ(c->rope.type, "llama3");
    EXPECT_EQ(c->rope.theta, 500000.0);
    EXPECT_EQ(c->rope.factor, 32.0);
    EXPECT_EQ(c->rope.original_max_position_embeddings, 8192);
  }
}

TEST(Config, Gemma3LegacyLocalBaseAndDefaultPattern) {
  TempDir dir;
  ModelConfig c = parse(dir, "gemma3_text", R"("sliding_window": 512, "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0, "sliding_window_pattern": 2,
    "rope_scaling": {"rope_type": "linear", "factor": 8.0})");
  EXPECT_EQ(c.layer_window, (std::vector<int32_t>{512, 0, 512, 0}));
  EXPECT_EQ(c.rope.type, "linear");
  EXPECT_EQ(c.rope.theta, 1000000.0);
  EXPECT_EQ(c.rope_local.type, "default");
  EXPECT_EQ(c.rope_local.theta, 10000.0);
  EXPECT_TRUE(c.tie_word_embeddings);  // Gemma's default
  EXPECT_EQ(describe_layer_kinds(c), "2 × sliding 512, 2 × full");
}

TEST(Config, LayerKindsPerFamilyRules) {
  TempDir a, b, d;
  EXPECT_EQ(parse(a, "gemma2", R"("sliding_window": 16)").layer_window,
            (std::vector<int32_t>{16, 0, 16, 0}));
  EXPECT_EQ(parse(b, "qwen2", R"("sliding_window": 8, "use_sliding_window": true,
    "max_window_layers": 3)")
                .layer_window,
            (std::vector<int32_t>{0, 0, 0, 8}));
  EXPECT_EQ(parse(d, "mistral", R"("sliding_window": 4096)").layer_window,
            std::vector<int32_t>(4, 4096));
}

TEST(Config, EosListFromGenerationConfig) {
  TempDir dir;
  write_bytes(dir.file("generation_config.json"), R"({"bos_token_id": 5, "eos_token_id": [7, 9]})");
  ModelConfig c = parse(dir, "llama", R"("bos_token_id": 1, "eos_token_id": 2)");
  EXPECT_EQ(c.bos_token_id, 5);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{7, 9}));
}

TEST(Config, MissingFieldIsNamed) {
  TempDir dir;
  write_bytes(dir.file("config.json"), R"({"model_type": "llama", "vocab_size": 10})");
  expect_error([&] { parse_hf_config(dir.str()); },
               {"config.json", "field 'hidden_size' is missing"});
}

TEST(Config, WrongTypeIsNamed) {
  TempDir dir;
  expect_error([&] { parse(dir, "llama", R"("rope_scaling": {"factor": "big"})"); },
               {"config.json", "rope_scaling.factor", "not a number"});
  expect_error([&] { parse(dir, "llama", R"("layer_types": ["full_attention"])"); },
               {"field 'layer_types'", "1 entries for 4 layers"});
  expect_error([&] { parse(dir, "llama", R"("num_key_value_heads": 3)"); },
               {"num_key_value_heads"});
  expect_error([&] { parse(dir, "llama", R"("rope_scaling": {"rope_type": "spiral"})"); },
               {"rope type 'spiral'"});
}

TEST(Config, MissingOrBrokenFile) {
  TempDir dir;
  expect_error([&] { parse_hf_config(dir.str()); }, {"config.json", "cannot open"});
  write_bytes(dir.file("config.json"), "{\"model_type\": ");
  expect_error([&] { parse_hf_config(dir.str()); }, {"config.json", "not valid JSON"});
}

}  // namespace
}  // namespace cairn
