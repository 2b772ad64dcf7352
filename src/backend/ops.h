// The op interface every backend implements. Each op is a free function that
// dispatches on the device of its output through the op table (op_table.h); a
// backend registers one entry per op. Activations are f32 on the CPU backend;
// weights stay in their stored dtype (f32, bf16, f16).
//
// Determinism contract (DESIGN.md decision 7): each output row is computed with
// a reduction order that depends only on that row's inputs and fixed constants,
// never on the number of rows, the thread count or how tokens were chunked.
#pragma once

#include <cstdint>
#include <span>

#include "core/tensor.h"

namespace cairn::ops {

// y[n, m] = x[n, k] · w[m, k]ᵀ (+ bias[m]). x f32; w f32/bf16/f16; bias f32 or null; y f32.
void matmul(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y);

// y[n, d] = table[ids[i], :] converted to f32. table [vocab, d] f32/bf16/f16.
// An id outside [0, vocab) is an Error(kInvalidArgument).
void embedding(const Tensor& table, std::span<const int32_t> ids, Tensor& y);

// y[n, d] = x / sqrt(mean(x²) + eps) * w. x, y f32 [n, d]; w f32 [d]. y may alias x.
void rms_norm(const Tensor& x, const Tensor& w, float eps, Tensor& y);

// y[n, d] = (x - mean) / sqrt(var + eps) * w + b. b may be null. y may alias x.
void layer_norm(const Tensor& x, const Tensor& w, const Tensor* b, float eps, Tensor& y);

enum class RopeLayout : uint8_t {
  kHalfSplit,    // pairs (i, i + rotary_dim/2): HF's rotate_half
  kInterleaved,  // pairs (2i, 2i + 1): llama2.c, GPT-J
};

struct RopeParams {
  std::span<const float> inv_freq;  // [rotary_dim / 2]: angle = position * inv_freq[i]
  int rotary_dim = 0;               // ≤ head_dim; dims past it pass through (partial rotary)
  RopeLayout layout = RopeLayout::kHalfSplit;
  float attention_factor = 1.0f;  // cos and sin are scaled by it (yarn, longrope)
};

// Rotates x [n_tokens, n_heads, head_dim] f32 in place; positions [n_tokens].
void rope(Tensor& x, std::span<const int32_t> positions, const RopeParams& p);

struct AttentionParams {
  float scale = 1.0f;    // multiplies q·k before the softcap
  float softcap = 0.0f;  // > 0: logits = softcap * tanh(logits / softcap)
  int32_t window = 0;    // > 0: a query at p sees keys at positions in (p - window, p]
};

// Causal attention of queries over one sequence's keys and values.
// q [n_q, n_heads, head_dim]; k, v [n_kv, n_kv_heads, head_dim] (f32, bf16 or f16);
// q_positions [n_q], kv_positions [n_kv]: a query sees keys whose position is ≤ its own
// (and inside the window). n_heads is a multiple of n_kv_heads (GQA).
// out [n_q, n_heads, head_dim] f32.
void attention(const Tensor& q, const Tensor& k, const Tensor& v,
               std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
               const AttentionParams& p, Tensor& out);

enum class Activation : uint8_t { kSilu, kGeluTanh };

// out[n, f] = act(gate[n, f]) * up[n, f]. All f32. out may alias gate.
void gated_activation(const Tensor& gate, const Tensor& up, Activation act, Tensor& out);

// y = a + b, elementwise f32, same shape. y may alias a or b.
void add(const Tensor& a, const Tensor& b, Tensor& y);

// x *= s, elementwise f32, in place.
void scale(Tensor& x, float s);

// x = cap * tanh(x / cap), in place, f32.
void softcap(Tensor& x, float cap);

// Row-wise softmax / log-softmax of x [n, d] f32 into y. y may alias x.
void softmax(const Tensor& x, Tensor& y);
void log_softmax(const Tensor& x, Tensor& y);

// Copy with dtype conversion between same-shaped contiguous tensors
// (f32/bf16/f16 in any direction).
void convert(const Tensor& src, Tensor& dst);

}  // namespace cairn::ops
