// How one layer's K and V rows are stored in a page (DESIGN.md decision 4):
// full precision in f32/bf16/f16, or affine-quantized along head_dim in groups
// (x ≈ code · scale + bias, one f16 scale and one f16 bias per group).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cairn {

struct ModelConfig;

enum class KvStore : uint8_t { kF32, kBF16, kF16, kAffine };

struct LayerFormat {
  KvStore store = KvStore::kF32;
  int32_t bits = 0;        // 4 or 8 when kAffine, else 0
  int32_t group_size = 0;  // 32, 64 or 128 when kAffine, else 0

  bool operator==(const LayerFormat&) const = default;
  bool quantized() const { return store == KvStore::kAffine; }
  // Bytes of one head's K (or V) row of head_dim elements. An affine row is
  // codes [head_dim * bits / 8], then scales f16 [n_groups], then biases f16 [n_groups].
  size_t row_bytes(int64_t head_dim) const;
  std::string name() const;  // "f32", "bf16", "f16", "q4g64", "q8g32", ...
};

LayerFormat affine_format(int32_t bits, int32_t group_size);

// The full-precision store of a model: its torch_dtype when bf16/f16, else f32.
KvStore full_store_for(const ModelConfig& c);
LayerFormat full_format(KvStore store);

// Error(kInvalidArgument) naming the value unless bits ∈ {4, 8}, group_size ∈
// {32, 64, 128} and group_size divides head_dim. `what` says where they came from.
void check_affine(int32_t bits, int32_t group_size, int64_t head_dim, const std::string& what);

// A sequence's quantization plan: the formats its layers take once it holds
// quant_start positions (bf16-first). Empty `layers` means never quantize.
struct KvQuantScheme {
  std::vector<LayerFormat> layers;  // [n_layers] target format per layer, or empty
  int64_t quant_start = 0;          // positions held before conversion (0: after the first append)
  bool enabled() const { return !layers.empty(); }
};

// Uniform scheme: every layer affine(bits, group_size). bits 0 → disabled.
KvQuantScheme uniform_scheme(const ModelConfig& c, int32_t bits, int32_t group_size,
                             int64_t quant_start);

// Per-layer scheme from a kv_config.json: a list of {layer_idx, bits, group_size};
// unlisted layers keep `full`. Error(kBadFile) naming the path and the entry.
KvQuantScheme scheme_from_kv_config(const ModelConfig& c, const std::string& path, KvStore full,
                                    int64_t quant_start);

// K+V bytes one position costs in layer format f: 2 · n_kv_heads · row_bytes.
int64_t kv_bytes_per_token(const LayerFormat& f, int64_t n_kv_heads, int64_t head_dim);

}  // namespace cairn
