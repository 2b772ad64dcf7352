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

// y[n, m] = x[n, k] · w[m, k]ᵀ (+ bias[m]). x f32, or bf16/f16 when w is of that dtype; w
// f32/bf16/f16; bias f32 or null; y f32. A bf16/f16 x gives the bits of its f32 values.
void matmul(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y);

// The dtype matmul(x, w, …) takes its x in at no cost: w's dtype where the backend of w's
// device rounds x to it anyway (a GPU's bf16/f16 products in the batch-invariant mode), so a
// producer of x may write it rounded (the norms' y, the gated activations' and the attentions'
// out may be bf16/f16: the f32 result rounded to nearest even) and save the product its
// rounding pass; else f32. matmul gives the same bits either way.
DType matmul_input_dtype(const Tensor& w);

// y[n, d] = table[ids[i], :] converted to f32. table [vocab, d] f32/bf16/f16.
// An id outside [0, vocab) is an Error(kInvalidArgument).
void embedding(const Tensor& table, std::span<const int32_t> ids, Tensor& y);

// y[n, d] = x / sqrt(mean(x²) + eps) * w. x f32 [n, d]; w f32 [d]; y [n, d] f32 (may alias x),
// or bf16/f16 (the f32 result rounded to nearest even; not aliasing x).
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

// Per-head RMSNorm of q and k before their rotation (Qwen3's and Gemma 3's q_norm and
// k_norm): weights [head_dim] f32 on q's device, either may be absent.
struct HeadNorms {
  const Tensor* q = nullptr;
  const Tensor* k = nullptr;
  float eps = 0.0f;
  bool any() const { return q != nullptr || k != nullptr; }
};

// A fused q|k|v product's output split and RoPE'd in one pass: q [n, n_heads, head_dim] and
// k [n, n_kv_heads, head_dim] get the rotated columns, v [n, n_kv_heads, head_dim] the copied
// ones, of qkv [n, (n_heads + 2 n_kv_heads) · head_dim]. All f32, q, k, v distinct from qkv.
// Bits equal split_columns(qkv, {q, k, v}), then with `norms` rms_norm of each head row of q
// (by norms.q) and of k (by norms.k), then rope(q) and rope(k).
void split_rope(const Tensor& qkv, std::span<const int32_t> positions, const RopeParams& p,
                Tensor& q, Tensor& k, Tensor& v, const HeadNorms& norms = {});

// Affine-quantized K/V rows (the row format of kv/kv_format.h): per head row of head_dim
// elements, codes [head_dim · bits / 8] (4-bit: two per byte, low nibble first), then f16
// scales [head_dim / group_size], then f16 biases [head_dim / group_size]; a value is
// code · scale + bias (an f32 multiply, then an f32 add). Encoding (quantize_rows): per group,
// bias = the largest f16 ≤ min, scale = the smallest f16 ≥ (max − bias) / (2^bits − 1),
// code = round-half-even((x − bias) / scale) clamped to [0, 2^bits − 1] (0 when scale is 0).
struct KvRowQuant {
  int32_t bits = 0;        // 4 or 8; 0: not quantized
  int32_t group_size = 0;  // 32, 64 or 128, dividing head_dim
  bool enabled() const { return bits > 0; }
  int64_t row_bytes(int64_t head_dim) const {
    return head_dim * bits / 8 + 4 * (head_dim / group_size);
  }
};

struct AttentionParams {
  float scale = 1.0f;    // multiplies q·k before the softcap
  float softcap = 0.0f;  // > 0: logits = softcap * tanh(logits / softcap)
  int32_t window = 0;    // > 0: a query at p sees keys at positions in (p - window, p]
  // attention_seqs only: K and V rows stored affine-quantized (u8 tensors
  // [rows, n_kv_heads, kv_quant.row_bytes(head_dim)], head_dim from q).
  KvRowQuant kv_quant = {};  // a default so {scale, softcap, window} still initializes all
};

// Causal attention of queries over one sequence's keys and values.
// q [n_q, n_heads, head_dim]; k, v [n_kv, n_kv_heads, head_dim] (f32, bf16 or f16);
// q_positions [n_q], kv_positions [n_kv]: a query sees keys whose position is ≤ its own
// (and inside the window). n_heads is a multiple of n_kv_heads (GQA).
// out [n_q, n_heads, head_dim] f32, or bf16/f16 (the f32 result rounded to nearest even).
void attention(const Tensor& q, const Tensor& k, const Tensor& v,
               std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
               const AttentionParams& p, Tensor& out);

// One sequence of attention_seqs: keys and values at rows 0 .. n_kv-1 of k and
// v, key j at position j (a cache that stores each position at its index); its
// queries are rows [q_begin, q_begin + n_q) of q and out.
struct AttentionSeq {
  // [>= n_kv, n_kv_heads, head_dim] f32, bf16 or f16; u8 [>= n_kv, n_kv_heads, row_bytes]
  // when AttentionParams::kv_quant is enabled.
  const Tensor* k = nullptr;
  const Tensor* v = nullptr;  // k's shape and dtype
  int64_t q_begin = 0, n_q = 0, n_kv = 0;
  // attention_pages only (k and v unused): its pages are entries
  // [page_begin, page_begin + ceil(n_kv / page_tokens)) of KvPages::pages.
  int64_t page_begin = 0;
};

// attention() for many sequences in one call (one launch on a GPU): each query
// row's output is bit for bit what attention() gives for its sequence alone,
// with kv_positions 0 .. n_kv-1. q, out [n_rows, n_heads, head_dim] f32 (out may be bf16/f16
// as attention()'s);
// q_positions [n_rows]. Every sequence's K/V has one dtype and n_kv_heads; the
// sequences' query rows do not overlap; rows of out no sequence owns are not written.
void attention_seqs(const Tensor& q, std::span<const AttentionSeq> seqs,
                    std::span<const int32_t> q_positions, const AttentionParams& p, Tensor& out);

// K/V rows held in pages (the paged KV state's layout, kv/page_layout.h): key j
// of a sequence is row j % page_tokens of its page j / page_tokens; a page's
// pointer plus k_offset (v_offset) bytes starts its K (V) block of one layer,
// [page_tokens, n_kv_heads, head_dim] of dtype (f32, bf16 or f16), or u8
// [page_tokens, n_kv_heads, row_bytes] when AttentionParams::kv_quant is enabled.
// A null page is one released out of a sliding window: never read.
struct KvPages {
  std::span<const void* const> pages;  // host array of pointers into memory of the op's device
  size_t k_offset = 0, v_offset = 0;
  int64_t page_tokens = 0;
  int64_t n_kv_heads = 0;
  DType dtype = DType::kF32;
};

// attention_seqs over paged K/V: every row's bits equal attention_seqs' over
// the same rows held contiguously (the page size never changes a result).
void attention_pages(const Tensor& q, const KvPages& kv, std::span<const AttentionSeq> seqs,
                     std::span<const int32_t> q_positions, const AttentionParams& p, Tensor& out);

enum class Activation : uint8_t { kSilu, kGeluTanh };

// out[n, f] = act(gate[n, f]) * up[n, f]. gate, up f32; out f32 (may alias gate), or bf16/f16
// (the f32 result rounded to nearest even; aliasing neither).
void gated_activation(const Tensor& gate, const Tensor& up, Activation act, Tensor& out);
// The same of a fused gate|up product's output, without splitting it first:
// out[n, f] = act(gate_up[n, j]) * gate_up[n, f + j], j < f. gate_up [n, 2f] f32, out [n, f]
// f32 or bf16/f16 (not aliasing gate_up). Bits equal gated_activation over the two halves.
void gated_activation_fused(const Tensor& gate_up, Activation act, Tensor& out);

// y = a + b, elementwise f32, same shape. y may alias a or b.
void add(const Tensor& a, const Tensor& b, Tensor& y);

// The residual stream's add and the next RMSNorm in one pass: x += r, then y = rms_norm(x, w,
// eps). Bits equal add(x, r, x) followed by rms_norm(x, w, eps, y). x, r [..., d] f32, y of x's
// shape f32 or bf16/f16 (distinct from x and r), w [d].
void add_rms_norm(Tensor& x, const Tensor& r, const Tensor& w, float eps, Tensor& y);

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

// One block of rows of convert_rows: rows [src_row, src_row + n_rows) of *src
// converted into rows [dst_row, dst_row + n_rows) of *dst. A row is everything
// past dim 0; src and dst have the same dims past dim 0.
struct RowCopy {
  const Tensor* src = nullptr;
  int64_t src_row = 0;
  Tensor* dst = nullptr;
  int64_t dst_row = 0, n_rows = 0;
};

// convert() of many row blocks in one call (one launch on a GPU): a batch's
// K/V rows appended to each sequence's cache. The bytes written are convert()'s.
// Every src has one dtype, every dst one dtype (f32, bf16 or f16), all on one
// device; destination rows do not overlap.
void convert_rows(std::span<const RowCopy> copies);

// x [n, W] f32 split by columns into parts [n, w_i] f32 (Σ w_i = W, in order):
// the separate outputs of a fused projection (q | k | v, gate | up). Copies only.
void split_columns(const Tensor& x, std::span<Tensor* const> parts);

// quantize_rows: rows [src_row, src_row + n_rows) of each f32 *src [*, n_kv_heads, head_dim]
// encoded in the format q into rows [dst_row, …) of u8 *dst [*, n_kv_heads, q.row_bytes(head_dim)]
// (one launch on a GPU). The bytes are the paged KV's encoding of the same rows on any backend.
void quantize_rows(std::span<const RowCopy> copies, const KvRowQuant& q);

// Sampling: logits processors, then the sampling chain, for many rows at once.

// A logit_bias entry: logits[id] += bias.
struct LogitBias {
  int32_t id = 0;
  float bias = 0.0f;
};

// A generated id and how many times it was generated (presence/frequency penalties).
struct IdCount {
  int32_t id = 0;
  int32_t count = 0;
};

// The most top logprobs sample_rows lists per row.
constexpr int32_t kMaxSampleTop = 256;

// One row of sample_rows. Its logits first go through the processors
// (sample/logits_processors.h) in the order of the fields below, then through the
// sampling chain (sample/sampler.h): temperature 0 → argmax (lowest id on ties);
// else logits / temperature → top-k → top-p → min-p → softmax → the inverse CDF of
// the kept candidates (probability descending, ties by id) at
// u = philox_uniform(seed, step) (backend/philox.h). Spans are host memory, read
// during the call only.
struct SampleRow {
  float temperature = 1.0f;     // ≥ 0; 0: greedy
  int32_t top_k = 0;            // ≥ 0; 0: off
  float top_p = 1.0f;           // (0, 1]; 1: off
  float min_p = 0.0f;           // [0, 1]; 0: off
  uint64_t seed = 0, step = 0;  // the draw's counter
  // < 0: no logprobs (logprob 0, no list); else the token's logprob and the
  // min(n_top, kept) most likely tokens (n_top ≤ kMaxSampleTop).
  int32_t n_top = 0;
  std::span<const LogitBias> bias;     // logits[id] += bias, in this order (ids may repeat)
  float repetition_penalty = 1.0f;     // > 0; each id of penalized: l > 0 ? l / p : l * p
  std::span<const int32_t> penalized;  // distinct ids (the repetition window's)
  float presence_penalty = 0.0f;       // each (id, count) of counted:
  float frequency_penalty = 0.0f;      //   l -= frequency · count + presence
  std::span<const IdCount> counted;    // distinct ids, count ≥ 1
  std::span<const int32_t> masked;     // ids set to -inf (EOS before min_tokens)
};

// Where sample_rows writes each row's results: every tensor contiguous, on the
// host or on the logits' device (all four on the same one).
struct SampleOutputs {
  Tensor* ids = nullptr;       // [n_rows] i32: the drawn token (greedy: the argmax)
  Tensor* logprobs = nullptr;  // [n_rows] f32: its logprob (0 when n_top < 0)
  // [n_rows, width] i32 and f32, width ≥ every row's n_top: the row's list, best
  // first, then id -1 and logprob 0. Both null when no row has n_top > 0.
  Tensor* top_ids = nullptr;
  Tensor* top_logprobs = nullptr;
};

// Processors and the sampling chain of every row of logits [n_rows, vocab] f32 (on
// the host or a device), rows[i] for row i. The processors edit logits in place (a
// row without any is left as it was); the temperature does not. Logprobs are those
// of the distribution the token was drawn from: the log-softmax of the processed
// logits when greedy, else of logits / temperature over the candidates that
// top-k, top-p and min-p kept. A row's results are a function of its own logits
// and SampleRow alone (never of the other rows or their number). Ids in the lists
// must be in [0, vocab). Host outputs hold the results when it returns; device
// outputs are written in stream order, like any op's.
void sample_rows(Tensor& logits, std::span<const SampleRow> rows, const SampleOutputs& out);

}  // namespace cairn::ops
