// Model-free drivers for KV tests: a tiny config and one forward step's
// attention calls over every layer, with q/k/v drawn from a hash of
// (stream, layer, position) so that the same content can be replayed.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kv/paged_kv.h"
#include "model/config.h"
#include "model/kv_view.h"

namespace cairn::test {

// A 64 MiB pool of f32 pages of `page_tokens` positions, with rollback slack.
inline PagedKvOptions f32_options(int64_t page_tokens, int64_t rollback = 0) {
  PagedKvOptions o;
  o.page_tokens = page_tokens;
  o.budget_bytes = int64_t{64} << 20;
  o.rollback_tokens = rollback;
  o.full_store = KvStore::kF32;
  return o;
}

inline ModelConfig tiny_config(std::vector<int32_t> windows, int64_t n_heads = 4,
                               int64_t n_kv_heads = 2, int64_t head_dim = 32,
                               const char* dtype = "float32") {
  ModelConfig c;
  c.n_layers = static_cast<int64_t>(windows.size());
  c.n_heads = n_heads;
  c.n_kv_heads = n_kv_heads;
  c.head_dim = head_dim;
  c.layer_window = std::move(windows);
  c.torch_dtype = dtype;
  return c;
}

// Uniform in [-2, 2) from a hash of the arguments (kind 0: q, 1: k, 2: v).
inline float draw(uint32_t stream, int64_t layer, int64_t pos, int kind, int64_t i) {
  uint64_t x = (uint64_t{stream} << 40) ^ (static_cast<uint64_t>(layer) << 32) ^
               (static_cast<uint64_t>(pos) << 12) ^ (static_cast<uint64_t>(kind) << 10) ^
               static_cast<uint64_t>(i);
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<float>(x >> 40) / static_cast<float>(1 << 24) * 4.0f - 2.0f;
}

struct SpanSpec {
  int32_t slot = 0;
  int64_t begin = 0;  // first position
  int64_t n = 0;
  uint32_t stream = 0;
};

// Outputs [n_layers] of [n_tokens * n_heads * head_dim] for one step.
using StepOut = std::vector<std::vector<float>>;

inline StepOut run_step(KvView& kv, const ModelConfig& c, const std::vector<SpanSpec>& spans,
                        float softcap = 0.0f) {
  ForwardBatch b;
  for (const SpanSpec& s : spans) {
    b.spans.push_back({s.slot, b.n_tokens(), s.n, true});
    for (int64_t i = 0; i < s.n; ++i) {
      b.tokens.push_back(0);
      b.positions.push_back(static_cast<int32_t>(s.begin + i));
    }
  }
  const int64_t n = b.n_tokens(), hd = c.head_dim;
  StepOut outs;
  for (int il = 0; il < c.n_layers; ++il) {
    Tensor q = Tensor::empty({n, c.n_heads, hd}, DType::kF32);
    Tensor k = Tensor::empty({n, c.n_kv_heads, hd}, DType::kF32);
    Tensor v = Tensor::empty({n, c.n_kv_heads, hd}, DType::kF32);
    Tensor o = Tensor::empty({n, c.n_heads, hd}, DType::kF32);
    int64_t row = 0;
    for (const SpanSpec& s : spans)
      for (int64_t t = 0; t < s.n; ++t, ++row) {
        for (int64_t i = 0; i < c.n_heads * hd; ++i)
          q.data<float>()[row * c.n_heads * hd + i] = draw(s.stream, il, s.begin + t, 0, i);
        for (int64_t i = 0; i < c.n_kv_heads * hd; ++i) {
          k.data<float>()[row * c.n_kv_heads * hd + i] = draw(s.stream, il, s.begin + t, 1, i);
          v.data<float>()[row * c.n_kv_heads * hd + i] = draw(s.stream, il, s.begin + t, 2, i);
        }
      }
    ops::AttentionParams p{1.0f / std::sqrt(static_cast<float>(hd)), softcap,
                           c.layer_window[static_cast<size_t>(il)]};
    kv.append_and_attend(il, b, q, k, v, p, o);
    outs.emplace_back(o.data<float>(), o.data<float>() + o.numel());
  }
  return outs;
}

inline bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

inline bool bit_equal(const StepOut& a, const StepOut& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!bit_equal(a[i], b[i])) return false;
  return true;
}

}  // namespace cairn::test
