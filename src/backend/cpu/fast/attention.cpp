// Attention fast path: online softmax over blocks of kKeyBlock keys, blocks
// aligned to key index 0. Each (query, head) is one task: its scores, running
// max, denominator and weighted sum of values depend only on that query, the
// keys and values, and the block grid, never on the other queries in the
// batch or on how the pool split the tasks. Masked keys are skipped, and a
// block with no visible key is skipped whole.
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/fast/fast.h"
#include "core/thread_pool.h"

namespace cairn::ops::fast {
namespace {

constexpr int64_t kKeyBlock = 32;

struct AttentionJob {
  const RowKernels* k;
  const float* q;       // [n_q, n_heads, head_dim]
  const uint8_t* keys;  // [n_kv, n_kv_heads, head_dim] in kv_dtype
  const uint8_t* values;
  DType kv_dtype;
  size_t kv_row_bytes;  // bytes of one head_dim row of k or v
  std::span<const int32_t> q_positions, kv_positions;
  AttentionParams p;
  int64_t n_heads, n_kv_heads, head_dim, n_kv;
  float* out;  // [n_q, n_heads, head_dim]
};

bool visible(int32_t q_pos, int32_t kv_pos, int32_t window) {
  return kv_pos <= q_pos && (window <= 0 || kv_pos > q_pos - window);
}

// Scores of keys [b0, b0 + n) for one query row into s (-inf where masked);
// returns the block's max (-inf when nothing is visible).
float block_scores(const AttentionJob& j, const float* q, int32_t q_pos, int64_t kvh, int64_t b0,
                   int64_t n, float* s) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t key = b0 + i;
    if (!visible(q_pos, j.kv_positions[static_cast<size_t>(key)], j.p.window)) {
      s[i] = -std::numeric_limits<float>::infinity();
      continue;
    }
    const uint8_t* krow = j.keys + (key * j.n_kv_heads + kvh) * j.kv_row_bytes;
    float v = j.k->dot(q, krow, j.kv_dtype, j.head_dim) * j.p.scale;
    if (j.p.softcap > 0.0f)
      v = j.p.softcap * static_cast<float>(std::tanh(static_cast<double>(v) / j.p.softcap));
    s[i] = v;
    m = v > m ? v : m;
  }
  return m;
}

void attend_one(const AttentionJob& j, int64_t t, int64_t h, float* acc) {
  const float* q = j.q + (t * j.n_heads + h) * j.head_dim;
  const int32_t q_pos = j.q_positions[static_cast<size_t>(t)];
  const int64_t kvh = h / (j.n_heads / j.n_kv_heads);
  float s[kKeyBlock];
  float m = -std::numeric_limits<float>::infinity(), l = 0.0f;
  for (int64_t d = 0; d < j.head_dim; ++d) acc[d] = 0.0f;
  for (int64_t b0 = 0; b0 < j.n_kv; b0 += kKeyBlock) {
    const int64_t n = j.n_kv - b0 < kKeyBlock ? j.n_kv - b0 : kKeyBlock;
    const float block_max = block_scores(j, q, q_pos, kvh, b0, n, s);
    if (block_max == -std::numeric_limits<float>::infinity()) continue;
    const float m_new = block_max > m ? block_max : m;
    if (m_new > m && l > 0.0f) {  // rescale what was summed under the old max
      const float corr = std::exp(m - m_new);
      l *= corr;
      j.k->scale(acc, corr, acc, j.head_dim);
    }
    m = m_new;
    l += j.k->exp_sum(s, m, s, n);  // masked scores become exact zeros
    for (int64_t i = 0; i < n; ++i)
      if (s[i] != 0.0f)
        j.k->axpy(s[i], j.values + ((b0 + i) * j.n_kv_heads + kvh) * j.kv_row_bytes, j.kv_dtype,
                  acc, j.head_dim);
  }
  float* o = j.out + (t * j.n_heads + h) * j.head_dim;
  if (l > 0.0f)
    j.k->scale(acc, 1.0f / l, o, j.head_dim);
  else
    for (int64_t d = 0; d < j.head_dim; ++d) o[d] = 0.0f;
}

}  // namespace

void attention(const Tensor& q, const Tensor& k, const Tensor& v,
               std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
               const AttentionParams& p, Tensor& out) {
  AttentionJob j{&row_kernels(),
                 q.data<float>(),
                 static_cast<const uint8_t*>(k.raw()),
                 static_cast<const uint8_t*>(v.raw()),
                 k.dtype(),
                 dtype_bytes(k.dtype(), static_cast<size_t>(k.dim(2))),
                 q_positions,
                 kv_positions,
                 p,
                 q.dim(1),
                 k.dim(1),
                 q.dim(2),
                 k.dim(0),
                 out.data<float>()};
  ThreadPool::global().parallel_for(q.dim(0) * j.n_heads, [&](int64_t b, int64_t e) {
    std::vector<float> acc(static_cast<size_t>(j.head_dim));
    for (int64_t task = b; task < e; ++task)
      attend_one(j, task / j.n_heads, task % j.n_heads, acc.data());
  });
}

}  // namespace cairn::ops::fast
