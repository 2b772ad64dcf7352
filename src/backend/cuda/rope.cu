// Rotary position embedding, in place: blocks (t, j) rotate token t's pairs
// j · 256 … j · 256 + 255 (pairs of every head, flattened), one a thread, so a
// token's loads are all in flight at once (one block a token walked them 20 deep).
// Each block first computes the token's rotary_dim / 2 cos/sin pairs into shared
// memory as the CPU reference does (the f32 angle position × inv_freq[i], its
// cosine and sine in double rounded once, times attention_factor in f32), then
// rotates each pair with explicitly rounded f32 ops (no contraction), so the
// result matches the reference to the last bit wherever double cos/sin agree.
#include <algorithm>
#include <cmath>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/op_errors.h"
#include "backend/cuda/rope.h"

namespace cairn::cuda {
namespace {

constexpr int kRopeThreads = 256;

// x [n_tokens, n_heads, head_dim]; positions [n_tokens]; inv_freq [half]
// (device). Pair i is (i, i + half) when split, else (2i, 2i + 1); dims past
// 2 · half are left as they are.
__global__ void rope_kernel(float* x, const int32_t* positions, const float* inv_freq, int half,
                            int n_heads, int head_dim, float factor, bool split) {
  extern __shared__ float cs[];  // cos [half], then sin [half]
  const float pos = static_cast<float>(positions[blockIdx.x]);
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    double s, c;
    sincos(static_cast<double>(__fmul_rn(pos, inv_freq[i])), &s, &c);
    cs[i] = __fmul_rn(static_cast<float>(c), factor);
    cs[half + i] = __fmul_rn(static_cast<float>(s), factor);
  }
  __syncthreads();
  float* token = x + static_cast<int64_t>(blockIdx.x) * n_heads * head_dim;
  for (int k = blockIdx.y * blockDim.x + threadIdx.x; k < n_heads * half;
       k += gridDim.y * blockDim.x) {
    const int h = k / half, i = k % half;
    float* row = token + static_cast<int64_t>(h) * head_dim;
    float* a = split ? row + i : row + 2 * i;
    float* b = split ? row + i + half : row + 2 * i + 1;
    const float a0 = *a, b0 = *b, c = cs[i], s = cs[half + i];
    *a = __fsub_rn(__fmul_rn(a0, c), __fmul_rn(b0, s));
    *b = __fadd_rn(__fmul_rn(b0, c), __fmul_rn(a0, s));
  }
}

}  // namespace

void rope(Tensor& x, std::span<const int32_t> positions, const ops::RopeParams& p) {
  const int64_t n_tokens = x.dim(0), n_heads = x.dim(1), head_dim = x.dim(2);
  const int half = p.rotary_dim / 2;
  if (n_tokens == 0 || n_heads == 0) return;
  if (n_tokens > 0x7fffffff || n_heads * half > 0x7fffffff || head_dim > 0x7fffffff)
    invalid_argument("rope", x.describe() + " is too large for one launch");
  if (static_cast<size_t>(half) * 2 * sizeof(float) > 48 * 1024)
    invalid_argument("rope", "rotary_dim " + std::to_string(p.rotary_dim) + " is over 12288");
  const int32_t* dev_positions = upload(positions);
  const float* dev_inv_freq = upload(p.inv_freq);
  const size_t shared_bytes = static_cast<size_t>(half) * 2 * sizeof(float);
  const int64_t parts = std::min<int64_t>((n_heads * half + kRopeThreads - 1) / kRopeThreads, 64);
  const dim3 grid(static_cast<unsigned>(n_tokens),
                  static_cast<unsigned>(std::max<int64_t>(parts, 1)));
  rope_kernel<<<grid, kRopeThreads, shared_bytes, stream()>>>(
      x.data<float>(), dev_positions, dev_inv_freq, half, static_cast<int>(n_heads),
      static_cast<int>(head_dim), p.attention_factor, p.layout == ops::RopeLayout::kHalfSplit);
  check_launch("rope_kernel");
}

}  // namespace cairn::cuda
