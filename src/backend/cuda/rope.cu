// Rotary position embedding, in place: blocks (t, j) rotate token t's pairs
// j · 256 … j · 256 + 255 (pairs of every head, flattened), one a thread, so a
// token's loads are all in flight at once (one block a token walked them 20 deep).
// Each block first computes the token's rotary_dim / 2 cos/sin pairs into shared
// memory as the CPU reference does, then rotates each pair (rope_math.cuh), so the
// result matches the reference to the last bit wherever double cos/sin agree.
// split_rope does the same to a fused q|k|v output while splitting it (with or without head
// norms); from kAngleTableMinTokens tokens through an angle table (rope_angles.h).
#include <algorithm>
#include <cmath>
#include <string>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/op_errors.h"
#include "backend/cuda/pdl.cuh"
#include "backend/cuda/reduce.cuh"
#include "backend/cuda/rope.h"
#include "backend/cuda/rope_angles.h"
#include "backend/cuda/rope_math.cuh"
#include "backend/op_table.h"

namespace cairn::cuda {
namespace {

constexpr int kRopeThreads = 256;

// x [n_tokens, n_heads, head_dim]; positions [n_tokens]; inv_freq [half]
// (device). Pair i is (i, i + half) when split, else (2i, 2i + 1); dims past
// 2 · half are left as they are.
__global__ void rope_kernel(float* x, const int32_t* positions, const float* inv_freq, int half,
                            int n_heads, int head_dim, float factor, bool split) {
  pdl_enter();
  extern __shared__ float cs[];  // cos [half], then sin [half]
  token_angles(cs, positions, inv_freq, half, factor);
  float* token = x + static_cast<int64_t>(blockIdx.x) * n_heads * head_dim;
  for (int k = blockIdx.y * blockDim.x + threadIdx.x; k < n_heads * half;
       k += gridDim.y * blockDim.x) {
    const int h = k / half, i = k % half;
    float* row = token + static_cast<int64_t>(h) * head_dim;
    float* a = split ? row + i : row + 2 * i;
    float* b = split ? row + i + half : row + 2 * i + 1;
    const float a0 = *a, b0 = *b, c = cs[i], s = cs[half + i];
    *a = rotated_a(a0, b0, c, s);
    *b = rotated_b(a0, b0, c, s);
  }
}

// Output elements a split_rope_kernel thread takes at once, their loads in flight together
// (and a token's angles computed by a quarter of the blocks a thread an element would need).
constexpr int kSplitEach = 4;

// Element e (< width) of token row `in` as it is stored: q and k heads rotated as rope_kernel
// rotates them, v copied.
__device__ __forceinline__ float split_value(const float* in, const QkvHeads& o, int e,
                                             const float* cs, int half, bool split) {
  const int h = e / o.head_dim, d = e % o.head_dim;
  const float* row = in + static_cast<int64_t>(h) * o.head_dim;
  return h < o.h_q + o.h_kv ? rotated_at(row, d, cs, half, split) : row[d];
}

// qkv [n_tokens, (h_q + 2 h_kv) · head_dim] → q, k rotated as rope_kernel rotates them, v
// copied. A thread per kSplitEach output elements blockDim.x apart, read before any is stored: a
// rotated one reads both of its pair, so each pair's two outputs are rope_kernel's two.
__global__ void split_rope_kernel(const float* __restrict__ qkv, QkvHeads o,
                                  const int32_t* positions, const float* inv_freq, int half,
                                  float factor, bool split) {
  pdl_enter();
  extern __shared__ float cs[];
  token_angles(cs, positions, inv_freq, half, factor);
  const int width = (o.h_q + 2 * o.h_kv) * o.head_dim, step = blockDim.x * kSplitEach;
  const int64_t t = blockIdx.x;
  const float* in = qkv + t * width;
  for (int e0 = blockIdx.y * step + threadIdx.x; e0 < width; e0 += gridDim.y * step) {
    float x[kSplitEach];
#pragma unroll
    for (int j = 0; j < kSplitEach; ++j) {
      const int e = e0 + j * static_cast<int>(blockDim.x);
      x[j] = e < width ? split_value(in, o, e, cs, half, split) : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < kSplitEach; ++j) {
      const int e = e0 + j * static_cast<int>(blockDim.x);
      if (e < width) o.out(t, e / o.head_dim)[e % o.head_dim] = x[j];
    }
  }
}

// split_rope with head norms: a warp a head. q and k heads are RMS-normed as rms_norm_kernel
// normalizes a head_dim row at 256 threads (norms.cu: thread t's group of 4 elements, then
// block_reduce), which one warp emulates: chunk c of 32 groups is warp c's butterfly there,
// and the chunks' sums go through block_reduce's second butterfly at lanes 0 … chunks − 1
// (zeros elsewhere, as its empty warps give). The normed row, in the warp's shared row, is
// then rotated as split_rope_kernel rotates; v heads are copied.
constexpr int kNormWarps = kRopeThreads / 32;
constexpr int kMaxNormDim = 1024;  // rms_norm_kernel holds one group a thread up to here

// Σ x² of a head row in rms_norm_kernel's order (every lane gets it).
__device__ __forceinline__ float head_sum_squares(const float* row, int hd) {
  const int lane = static_cast<int>(threadIdx.x & 31), groups = (hd + 3) / 4;
  float chunk_sum = 0.0f;  // lane c: chunk c's butterfly
  for (int c = 0; c < (groups + 31) / 32; ++c) {
    const int g = 32 * c + lane;
    float ss = 0.0f;
    if (g < groups)
      for (int j = 0; j < 4; ++j) {
        const float v = 4 * g + j < hd ? row[4 * g + j] : 0.0f;
        ss = __fmaf_rn(v, v, ss);
      }
    ss = warp_reduce(ss, SumOp{});
    if (lane == c) chunk_sum = ss;
  }
  return warp_reduce(chunk_sum, SumOp{});
}

__global__ void split_norm_rope_kernel(const float* __restrict__ qkv, QkvHeads o, HeadNormArgs nrm,
                                       const int32_t* positions, const float* inv_freq, int half,
                                       float factor, bool split) {
  pdl_enter();
  extern __shared__ float cs[];  // cos [half], sin [half], then a row of head_dim a warp
  token_angles(cs, positions, inv_freq, half, factor);
  const int hd = o.head_dim, heads = o.h_q + 2 * o.h_kv, lane = static_cast<int>(threadIdx.x & 31);
  const int warp = static_cast<int>(threadIdx.x / 32);
  float* buf = cs + 2 * half + warp * hd;
  const int64_t t = blockIdx.x;
  for (int h = blockIdx.y * kNormWarps + warp; h < heads; h += gridDim.y * kNormWarps) {
    const float* row = qkv + (t * heads + h) * hd;
    const bool is_q = h < o.h_q, is_k = !is_q && h < o.h_q + o.h_kv;
    float* dst = o.out(t, h);
    if (!is_q && !is_k) {
      for (int d = lane; d < hd; d += 32) dst[d] = row[d];
      continue;
    }
    const float* w = is_q ? nrm.q_w : nrm.k_w;
    float inv = 1.0f;
    if (w != nullptr)
      inv = __frcp_rn(__fsqrt_rn(
          __fadd_rn(__fdiv_rn(head_sum_squares(row, hd), static_cast<float>(hd)), nrm.eps)));
    for (int d = lane; d < hd; d += 32)
      buf[d] = w ? __fmul_rn(__fmul_rn(row[d], inv), w[d]) : row[d];
    __syncwarp();
    for (int d = lane; d < hd; d += 32) dst[d] = rotated_at(buf, d, cs, half, split);
    __syncwarp();  // the row is rewritten by the warp's next head
  }
}

// What both launches share: a row of the grid per token, its `work` items (rotated pairs, or
// output columns) over up to 64 blocks of kRopeThreads, the positions and frequencies uploaded,
// and shared memory for the token's cos/sin table. Checks that the sizes fit one launch.
struct RopeLaunch {
  dim3 grid;
  size_t shared_bytes = 0;
  const int32_t* positions = nullptr;
  const float* inv_freq = nullptr;
  int half = 0;
};

RopeLaunch rope_launch(const char* op, const Tensor& x, int64_t work,
                       std::span<const int32_t> positions, const ops::RopeParams& p) {
  const int64_t n_tokens = x.dim(0);
  RopeLaunch l;
  l.half = p.rotary_dim / 2;
  if (n_tokens > 0x7fffffff || work > 0x7fffffff || x.dim(-1) > 0x7fffffff)
    invalid_argument(op, x.describe() + " is too large for one launch");
  if (static_cast<size_t>(l.half) * 2 * sizeof(float) > 48 * 1024)
    invalid_argument(op, "rotary_dim " + std::to_string(p.rotary_dim) + " is over 12288");
  l.positions = upload(positions);
  l.inv_freq = upload(p.inv_freq);
  l.shared_bytes = static_cast<size_t>(l.half) * 2 * sizeof(float);
  const int64_t parts = std::min<int64_t>((work + kRopeThreads - 1) / kRopeThreads, 64);
  l.grid =
      dim3(static_cast<unsigned>(n_tokens), static_cast<unsigned>(std::max<int64_t>(parts, 1)));
  return l;
}

}  // namespace

void rope(Tensor& x, std::span<const int32_t> positions, const ops::RopeParams& p) {
  const int64_t n_heads = x.dim(1), head_dim = x.dim(2);
  if (x.dim(0) == 0 || n_heads == 0) return;
  const RopeLaunch l = rope_launch("rope", x, n_heads * (p.rotary_dim / 2), positions, p);
  launch_kernel("rope_kernel", rope_kernel, l.grid, kRopeThreads, l.shared_bytes, x.data<float>(),
                l.positions, l.inv_freq, l.half, static_cast<int>(n_heads),
                static_cast<int>(head_dim), p.attention_factor,
                p.layout == ops::RopeLayout::kHalfSplit);
}

void split_rope(const Tensor& qkv, std::span<const int32_t> positions, const ops::RopeParams& p,
                Tensor& q, Tensor& k, Tensor& v, const ops::HeadNorms& norms) {
  if (qkv.dim(0) == 0 || qkv.dim(1) == 0) return;
  const int64_t hd = q.dim(2), heads = q.dim(1) + 2 * k.dim(1);
  const QkvHeads o = qkv_heads(q, k, v);
  const bool split = p.layout == ops::RopeLayout::kHalfSplit;
  if (split_rope_by_angles(qkv, positions, p, q, k, v, norms)) return;
  if (!norms.any()) {
    const RopeLaunch l =
        rope_launch("split_rope", qkv, (qkv.dim(1) + kSplitEach - 1) / kSplitEach, positions, p);
    launch_kernel("split_rope_kernel", split_rope_kernel, l.grid, kRopeThreads, l.shared_bytes,
                  qkv.data<float>(), o, l.positions, l.inv_freq, l.half, p.attention_factor, split);
    return;
  }
  // A warp a head: 32 work items a head give each warp of a block one head.
  const RopeLaunch l = rope_launch("split_rope", qkv, heads * 32, positions, p);
  const size_t shared = l.shared_bytes + static_cast<size_t>(kNormWarps * hd) * sizeof(float);
  if (hd > kMaxNormDim || shared > 48 * 1024)  // past the kernel: the ops it fuses
    return ops::split_rope_composed(ops::op_table(DeviceKind::kCuda), qkv, positions, p, q, k, v,
                                    norms);
  const HeadNormArgs nrm = head_norm_args(norms);
  launch_kernel("split_norm_rope_kernel", split_norm_rope_kernel, l.grid, kRopeThreads, shared,
                qkv.data<float>(), o, nrm, l.positions, l.inv_freq, l.half, p.attention_factor,
                split);
}

}  // namespace cairn::cuda
