#include "kv/page_attention.h"

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kv/row_codec.h"

namespace cairn {
namespace {

constexpr int kLanes = 16;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

float dot(const float* a, const float* b, int64_t n) {
  float lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += a[i + l] * b[i + l];
  for (int l = 0; i < n; ++i, ++l) lane[l] += a[i] * b[i];
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
  return lane[0];
}

// Per-task scratch: the group's query heads share each decoded key/value row.
struct Scratch {
  std::vector<float> k_row, v_row;  // [head_dim]
  std::vector<float> s;             // [group, kAttendKeyBlock] scores, then weights
  std::vector<float> m, l;          // [group] running max and sum
  std::vector<float> acc;           // [group, head_dim]
};

struct Job {
  const PagedRows* kv;
  const float* q;
  std::span<const int32_t> q_pos;
  int64_t n_heads, n_kv_heads, head_dim, group;
  ops::AttentionParams p;
  float* out;
};

// Row of key j, head kvh, decoded into buf unless it is f32 (then in place).
const float* load_row(const PagedRows& kv, std::span<const uint8_t* const> pages, int64_t j,
                      int64_t kvh, float* buf, int64_t head_dim) {
  const uint8_t* page = pages[static_cast<size_t>(j / kv.page_tokens)];
  CAIRN_CHECK(page != nullptr, "key {} lies in a released page", j);
  const uint8_t* row = page + static_cast<size_t>(j % kv.page_tokens) * kv.token_bytes +
                       static_cast<size_t>(kvh) * kv.row_bytes;
  if (kv.format.store == KvStore::kF32) return reinterpret_cast<const float*>(row);
  decode_row(row, head_dim, kv.format, buf);
  return buf;
}

// Scores of keys [b0, b0 + n) for the group's heads into w.s; masked = -inf.
// Returns whether any key of the block is visible.
bool block_scores(const Job& jb, Scratch& w, const float* q, int64_t kvh, int64_t b0, int64_t n,
                  int64_t lo, int64_t hi) {
  bool any = false;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = b0 + i;
    if (j < lo || j > hi) {
      for (int64_t g = 0; g < jb.group; ++g)
        w.s[static_cast<size_t>(g * kAttendKeyBlock + i)] = kNegInf;
      continue;
    }
    any = true;
    const float* kr = load_row(*jb.kv, jb.kv->k_pages, j, kvh, w.k_row.data(), jb.head_dim);
    for (int64_t g = 0; g < jb.group; ++g) {
      float s = dot(q + g * jb.head_dim, kr, jb.head_dim) * jb.p.scale;
      if (jb.p.softcap > 0.0f) s = jb.p.softcap * std::tanh(s / jb.p.softcap);
      w.s[static_cast<size_t>(g * kAttendKeyBlock + i)] = s;
    }
  }
  return any;
}

// Online-softmax update of head g with the block's scores (turned into weights).
void fold_block(const Job& jb, Scratch& w, int64_t g, int64_t n) {
  float* s = w.s.data() + g * kAttendKeyBlock;
  float bmax = kNegInf;
  for (int64_t i = 0; i < n; ++i) bmax = s[i] > bmax ? s[i] : bmax;
  float& m = w.m[static_cast<size_t>(g)];
  float& l = w.l[static_cast<size_t>(g)];
  const float m_new = bmax > m ? bmax : m;
  if (m_new > m && l > 0.0f) {
    const float corr = std::exp(m - m_new);
    l *= corr;
    float* acc = w.acc.data() + g * jb.head_dim;
    for (int64_t c = 0; c < jb.head_dim; ++c) acc[c] *= corr;
  }
  m = m_new;
  for (int64_t i = 0; i < n; ++i) {
    s[i] = s[i] == kNegInf ? 0.0f : std::exp(s[i] - m);
    l += s[i];
  }
}

void attend_task(const Job& jb, Scratch& w, int64_t t, int64_t kvh) {
  const int64_t q_pos = jb.q_pos[static_cast<size_t>(t)];
  const int64_t hi = std::min<int64_t>(q_pos, jb.kv->n_kv - 1);
  const int64_t lo = jb.p.window > 0 ? std::max<int64_t>(0, q_pos - jb.p.window + 1) : 0;
  const float* q = jb.q + (t * jb.n_heads + kvh * jb.group) * jb.head_dim;
  std::fill(w.m.begin(), w.m.end(), kNegInf);
  std::fill(w.l.begin(), w.l.end(), 0.0f);
  std::fill(w.acc.begin(), w.acc.end(), 0.0f);
  for (int64_t b0 = lo / kAttendKeyBlock * kAttendKeyBlock; b0 <= hi; b0 += kAttendKeyBlock) {
    const int64_t n = std::min(kAttendKeyBlock, jb.kv->n_kv - b0);
    if (!block_scores(jb, w, q, kvh, b0, n, lo, hi)) continue;
    for (int64_t g = 0; g < jb.group; ++g) fold_block(jb, w, g, n);
    for (int64_t i = 0; i < n; ++i) {
      if (b0 + i < lo || b0 + i > hi) continue;
      const float* vr = load_row(*jb.kv, jb.kv->v_pages, b0 + i, kvh, w.v_row.data(), jb.head_dim);
      for (int64_t g = 0; g < jb.group; ++g) {
        const float e = w.s[static_cast<size_t>(g * kAttendKeyBlock + i)];
        float* acc = w.acc.data() + g * jb.head_dim;
        for (int64_t c = 0; c < jb.head_dim; ++c) acc[c] += e * vr[c];
      }
    }
  }
  for (int64_t g = 0; g < jb.group; ++g) {
    float* o = jb.out + (t * jb.n_heads + kvh * jb.group + g) * jb.head_dim;
    const float l = w.l[static_cast<size_t>(g)];
    const float* acc = w.acc.data() + g * jb.head_dim;
    for (int64_t c = 0; c < jb.head_dim; ++c) o[c] = l > 0.0f ? acc[c] / l : 0.0f;
  }
}

}  // namespace

void attend_paged(const PagedRows& kv, const float* q, std::span<const int32_t> q_positions,
                  int64_t n_heads, int64_t n_kv_heads, int64_t head_dim,
                  const ops::AttentionParams& p, float* out) {
  CAIRN_CHECK(n_kv_heads > 0 && n_heads % n_kv_heads == 0, "{} heads over {} kv heads", n_heads,
              n_kv_heads);
  CAIRN_CHECK(kv.page_tokens > 0 && kv.k_pages.size() == kv.v_pages.size(), "bad page view");
  const Job jb{&kv, q, q_positions, n_heads, n_kv_heads, head_dim, n_heads / n_kv_heads, p, out};
  const int64_t n_q = static_cast<int64_t>(q_positions.size());
  ThreadPool::global().parallel_for(n_q * n_kv_heads, [&](int64_t b, int64_t e) {
    const auto d = static_cast<size_t>(head_dim), g = static_cast<size_t>(jb.group);
    Scratch w{std::vector<float>(d), std::vector<float>(d), std::vector<float>(g * kAttendKeyBlock),
              std::vector<float>(g), std::vector<float>(g), std::vector<float>(g * d)};
    for (int64_t task = b; task < e; ++task)
      attend_task(jb, w, task / n_kv_heads, task % n_kv_heads);
  });
}

}  // namespace cairn
