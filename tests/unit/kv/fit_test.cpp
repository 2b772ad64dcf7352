// fit: hand-checked numbers for two real configs (no weights) and agreement
// with the pool's own counters.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kv/fit.h"
#include "kv/paged_kv.h"
#include "kv_test_util.h"

namespace cairn::test {
namespace {

ModelConfig config_from(const std::string& name, const std::string& json) {
  const std::string dir = testing::TempDir() + name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << json;
  return parse_hf_config(dir);
}

const char* kLlama31_8B = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
  "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
  "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
  "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "hidden_act": "silu",
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009]})";

const char* kGemma3_12B = R"({
  "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 3840,
  "intermediate_size": 15360, "num_hidden_layers": 48, "num_attention_heads": 16,
  "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 262208,
  "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
  "rope_local_base_freq": 10000.0, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
  "sliding_window": 1024, "sliding_window_pattern": 6, "query_pre_attn_scalar": 256,
  "hidden_activation": "gelu_pytorch_tanh", "torch_dtype": "bfloat16",
  "bos_token_id": 2, "eos_token_id": 1})";

TEST(Fit, Llama31_8B) {
  FitInput in;
  in.config = config_from("llama31_8b", kLlama31_8B);
  in.full_store = KvStore::kBF16;
  // 2 (K, V) × 32 layers × 8 kv heads × 128 dims × 2 bytes = 128 KiB per position.
  EXPECT_EQ(kv_bytes_at(in, 8192), int64_t{131072} * 8192);
  EXPECT_EQ(kv_bytes_at(in, 8193), int64_t{131072} * (8192 + 32));  // one more page
  // Embeddings 2 × 128256 × 4096 + 32 × (attention 41943040 + MLP 176160768 + norms 8192) + 4096.
  EXPECT_EQ(estimate_params(in.config), int64_t{8030261248});
  in.quant = uniform_scheme(in.config, 4, 64, 0);  // 64 code bytes + 8 scale/bias bytes per row
  EXPECT_EQ(kv_bytes_at(in, 8192), int64_t{2} * 32 * 8 * 72 * 8192);
  in.quant.quant_start = 4096;
  EXPECT_EQ(kv_bytes_at(in, 4064), int64_t{131072} * 4064);  // still bf16
  in.weight_bytes = 2 * estimate_params(in.config);
  in.ctx_tokens = 8192;
  in.quant = {};
  in.budget_bytes = int64_t{20} << 30;
  in.bandwidth_gbs = 100;
  FitResult r = plan_fit(in);
  EXPECT_TRUE(r.fits);
  const int64_t room = in.budget_bytes - in.weight_bytes - r.workspace_bytes;
  EXPECT_EQ(r.max_ctx_tokens, room / 131072 / 32 * 32);
  EXPECT_NEAR(r.decode_tokens_per_s, 100e9 / (16060522496.0 + 1073741824.0), 1e-6);
}

TEST(Fit, Gemma3_12B) {
  FitInput in;
  in.config = config_from("gemma3_12b", kGemma3_12B);
  in.full_store = KvStore::kBF16;
  // 8 full layers at 2 × 8 × 256 × 2 = 8192 bytes per position each; 40 sliding
  // layers hold at most (1024 / 32) + 1 = 33 pages of 32 positions.
  const int64_t full = int64_t{8} * 8192 * 32768, sliding = int64_t{40} * 8192 * 33 * 32;
  EXPECT_EQ(full, 2147483648);
  EXPECT_EQ(sliding, 346030080);
  EXPECT_EQ(kv_bytes_at(in, 32768), full + sliding);
  EXPECT_EQ(kv_bytes_at(in, 512), int64_t{48} * 8192 * 512);  // below the window: every layer
}

// The pool's counters after a run equal fit's bytes within one page per group.
TEST(Fit, AgreesWithThePool) {
  ModelConfig c = tiny_config({0, 8, 0, 8}, 4, 2, 64);
  for (int bits : {0, 4}) {
    PagedKvOptions o;
    o.page_tokens = 16;
    o.rollback_tokens = 4;
    o.full_store = KvStore::kBF16;
    o.quant = uniform_scheme(c, bits, 32, 40);
    PagedKvState kv(c, o);
    FitInput in;
    in.config = c;
    in.full_store = KvStore::kBF16;
    in.page_tokens = 16;
    in.rollback_tokens = 4;
    in.quant = o.quant;
    int64_t n = 0;
    for (int64_t chunk : {7, 30, 1, 1, 25, 60}) {
      run_step(kv, c, {{0, n, chunk, 1}, {1, n, chunk, 2}});
      n += chunk;
      const int64_t pages_slack =
          2 * static_cast<int64_t>(kv.groups().size()) * kv.pool().page_bytes(kv.arena_of(0, 1));
      EXPECT_LE(std::abs(kv.pool().used_bytes() - 2 * kv_bytes_at(in, n)), pages_slack)
          << "bits " << bits << " at " << n;
    }
  }
}

}  // namespace
}  // namespace cairn::test
