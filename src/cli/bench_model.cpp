#include "cli/bench_model.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/safetensors_writer.h"

namespace cairn {
namespace {

// Fills n_bytes of `dtype` values uniform in ±bound with a xorshift stream.
void fill_uniform(uint8_t* dst, size_t n_bytes, DType dtype, float bound, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  size_t n = n_bytes / static_cast<size_t>(dtype_bits(dtype) / 8);
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    float v = (static_cast<float>(s >> 40) / 16777216.0f * 2.0f - 1.0f) * bound;
    if (dtype == DType::kF32)
      reinterpret_cast<float*>(dst)[i] = v;
    else if (dtype == DType::kBF16)
      reinterpret_cast<uint16_t*>(dst)[i] = f32_to_bf16(v);
    else
      reinterpret_cast<uint16_t*>(dst)[i] = f32_to_f16(v);
  }
}

SafetensorsEntry matrix(std::string name, int64_t rows, int64_t cols, DType dtype, uint64_t seed) {
  float bound = 0.5f / std::sqrt(static_cast<float>(cols));
  return {std::move(name), dtype, {rows, cols}, [=](uint8_t* dst, size_t n) {
            fill_uniform(dst, n, dtype, bound, seed);
          }};
}

SafetensorsEntry ones(std::string name, int64_t n, DType dtype) {
  return {std::move(name), dtype, {n}, [dtype](uint8_t* dst, size_t bytes) {
            size_t count = bytes / static_cast<size_t>(dtype_bits(dtype) / 8);
            for (size_t i = 0; i < count; ++i) {
              if (dtype == DType::kF32)
                reinterpret_cast<float*>(dst)[i] = 1.0f;
              else if (dtype == DType::kBF16)
                reinterpret_cast<uint16_t*>(dst)[i] = 0x3f80;
              else
                reinterpret_cast<uint16_t*>(dst)[i] = 0x3c00;
            }
          }};
}

nlohmann::json config_json(const BenchShape& s, DType dtype) {
  return {{"architectures", {"LlamaForCausalLM"}},
          {"model_type", "llama"},
          {"hidden_size", s.hidden},
          {"intermediate_size", s.ffn},
          {"num_hidden_layers", s.n_layers},
          {"num_attention_heads", s.n_heads},
          {"num_key_value_heads", s.n_kv_heads},
          {"vocab_size", s.vocab},
          {"max_position_embeddings", 32768},
          {"rms_norm_eps", 1e-6},
          {"rope_theta", 1000000.0},
          {"tie_word_embeddings", s.tied},
          {"torch_dtype", dtype == DType::kF32
                              ? "float32"
                              : std::string(dtype == DType::kBF16 ? "bfloat16" : "float16")},
          {"bos_token_id", 1},
          {"eos_token_id", 2}};
}

}  // namespace

int64_t BenchShape::n_params() const {
  int64_t head_dim = hidden / n_heads;
  int64_t attn = hidden * head_dim * (2 * n_heads + 2 * n_kv_heads);
  int64_t layer = attn + 3 * hidden * ffn + 2 * hidden;
  return n_layers * layer + vocab * hidden * (tied ? 1 : 2) + hidden;
}

const std::vector<BenchShape>& bench_shapes() {
  static const std::vector<BenchShape> shapes = {
      {"tiny", 256, 4, 4, 2, 704, 4096, true},
      {"0.5b", 896, 24, 14, 2, 4864, 151936, true},
      {"1.5b", 1536, 28, 12, 2, 8960, 151936, true},
  };
  return shapes;
}

const BenchShape& find_bench_shape(const std::string& name) {
  std::string names;
  for (const auto& s : bench_shapes()) {
    if (s.name == name) return s;
    names += (names.empty() ? "" : ", ") + s.name;
  }
  fail(ErrorCode::kInvalidArgument, "unknown shape '{}'; known shapes: {}", name, names);
}

void write_random_model(const BenchShape& s, DType dtype, const std::string& dir, uint64_t seed) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << config_json(s, dtype).dump(2);
  int64_t hd = s.hidden / s.n_heads;
  std::vector<SafetensorsEntry> t;
  t.push_back(matrix("model.embed_tokens.weight", s.vocab, s.hidden, dtype, seed));
  for (int64_t il = 0; il < s.n_layers; ++il) {
    std::string p = "model.layers." + std::to_string(il) + ".";
    uint64_t ls = seed + 100 * static_cast<uint64_t>(il + 1);
    t.push_back(ones(p + "input_layernorm.weight", s.hidden, dtype));
    t.push_back(matrix(p + "self_attn.q_proj.weight", s.n_heads * hd, s.hidden, dtype, ls + 1));
    t.push_back(matrix(p + "self_attn.k_proj.weight", s.n_kv_heads * hd, s.hidden, dtype, ls + 2));
    t.push_back(matrix(p + "self_attn.v_proj.weight", s.n_kv_heads * hd, s.hidden, dtype, ls + 3));
    t.push_back(matrix(p + "self_attn.o_proj.weight", s.hidden, s.n_heads * hd, dtype, ls + 4));
    t.push_back(ones(p + "post_attention_layernorm.weight", s.hidden, dtype));
    t.push_back(matrix(p + "mlp.gate_proj.weight", s.ffn, s.hidden, dtype, ls + 5));
    t.push_back(matrix(p + "mlp.up_proj.weight", s.ffn, s.hidden, dtype, ls + 6));
    t.push_back(matrix(p + "mlp.down_proj.weight", s.hidden, s.ffn, dtype, ls + 7));
  }
  t.push_back(ones("model.norm.weight", s.hidden, dtype));
  if (!s.tied) t.push_back(matrix("lm_head.weight", s.vocab, s.hidden, dtype, seed + 7));
  write_safetensors(dir + "/model.safetensors", t);
}

}  // namespace cairn
