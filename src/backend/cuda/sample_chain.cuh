// The sampling chain of one row in one thread block (sample_rows.cu), the
// CPU's chain (backend/sample_row.h) in the terms of sample_query.cuh:
//   pass 1: m = max s, the first element of the order (greedy's id), the bins' span;
//   pass 2: the row's bins (count and mass of each);
//   pass 3: the leading bins (or the draw's bin) sorted in shared memory;
// then each cut is a query: top-k the element at position k − 1, top-p the first
// whose cumulative mass reaches top_p of the kept mass, min-p the first whose s
// is below the min-p floor, the draw the first whose cumulative mass exceeds
// u × the nucleus' mass. A query outside the sorted run costs a pass or more.
#pragma once

#include "backend/cuda/sample_query.cuh"
#include "backend/philox.h"

namespace cairn::cuda::sampling {

// One row's parameters as the kernel reads them (ops::SampleRow, its lists
// replaced by ranges of the call's packed lists).
struct RowArgs {
  uint64_t seed = 0, step = 0;
  float inv_t = 1.0f;  // the host's 1.0f / temperature; 1 when greedy
  int32_t greedy = 0;
  int32_t top_k = 0;
  float top_p = 1.0f, min_p = 0.0f;
  int32_t n_top = 0;
  float repetition_penalty = 1.0f, presence_penalty = 0.0f, frequency_penalty = 0.0f;
  int32_t bias[2] = {0, 0};  // [begin, end) of the packed lists
  int32_t penalized[2] = {0, 0};
  int32_t counted[2] = {0, 0};
  int32_t masked[2] = {0, 0};
};

// Where the results go: [n_rows] ids and logprobs, [n_rows, width] top lists.
struct Outputs {
  int32_t* ids;
  float* logprobs;
  int32_t* top_ids;  // null when width is 0
  float* top_logprobs;
  int32_t width;
};

// Pass 1 over the row.
__device__ __noinline__ RowView first_pass(Shared& sh, const float* logits, int32_t vocab, bool vec,
                                           float inv_t) {
  RowView r{logits, vocab, 32 - __clz(max(vocab - 1, 1)), vec, inv_t, 0.0f, 0.0f, 0};
  float hi = -INFINITY, lo = INFINITY;
  uint64_t first = ~0ull;
  for_each_element(r, [&](int32_t id, float s) {
    hi = fmaxf(hi, s);
    if (s > -INFINITY) lo = fminf(lo, s);
    first = min(first, key64(desc_key(s), id));
  });
  r.m = block_fold(hi, MaxOp{}, reinterpret_cast<float*>(sh.fold));
  lo = block_fold(lo, MinOp{}, reinterpret_cast<float*>(sh.fold));
  r.first = block_fold(first, MinOp{}, sh.fold);
  const float span = fminf(__fsub_rn(r.m, lo), kSpanNats);
  r.bins_per_nat = span > 0.0f ? (kBins - 1) / span : 0.0f;
  return r;
}

// Sorts the leading bins holding at least `need` elements (as many as fit when
// need is kCap); with `draw` set (no cuts, no list), the bin of the draw instead
// when it lies past them.
__device__ __noinline__ void pregather(Shared& sh, const RowView& r, uint32_t need, bool draw,
                                       uint64_t draw_target) {
  const Hist& h = sh.level0;
  const int fit =
      static_cast<int>(first_where(kBins, [&](uint32_t b) { return h.count[b] > kCap; })) - 1;
  const int enough =
      static_cast<int>(first_where(kBins, [&](uint32_t b) { return h.count[b] >= need; }));
  const int last = min(fit, enough);
  Slice whole;
  whole.count = h.count[kBins - 1], whole.mass = h.mass[kBins - 1];
  if (draw) {
    const int b =
        static_cast<int>(first_where(kBins, [&](uint32_t k) { return h.mass[k] > draw_target; }));
    const Slice t = bucket_slice(h, whole, b, true, 0);
    if (b > last && t.count <= kCap) return gather(sh, r, t);
  }
  if (last < 0) return;
  Slice head = whole;
  head.bin_hi = last, head.count = h.count[last], head.mass = h.mass[last];
  gather(sh, r, head);
}

// floor(u · total): the draw's target (u has 24 bits).
__device__ __forceinline__ uint64_t draw_target(float u, uint64_t total) {
  const uint64_t k = static_cast<uint64_t>(u * 16777216.0f);
  return (__umul64hi(k, total) << 40) | ((k * total) >> 24);
}

// The smallest s min-p keeps: exp(s − m) ≥ min_p, evaluated in double as the CPU does.
__device__ __forceinline__ float min_p_floor(float m, float min_p) {
  auto keeps = [&](float s) {
    return exp(static_cast<double>(s) - m) >= static_cast<double>(min_p);
  };
  float s = static_cast<float>(static_cast<double>(m) + log(static_cast<double>(min_p)));
  for (int i = 0; i < 64 && !keeps(s); ++i) s = nextafterf(s, INFINITY);
  for (int i = 0; i < 64 && keeps(nextafterf(s, -INFINITY)); ++i) s = nextafterf(s, -INFINITY);
  return s;
}

// The nucleus: its length and mass after top-k, top-p and min-p.
struct Cut {
  uint32_t n;
  uint64_t total;
};

__device__ __noinline__ Cut cut_of(Shared& sh, const RowView& r, const RowArgs& a, uint64_t z) {
  Cut c{static_cast<uint32_t>(r.vocab), z};
  if (a.top_k > 0 && a.top_k < r.vocab) {
    const Found f = resolve(sh, r, {Seek::kAt, static_cast<uint64_t>(a.top_k - 1)});
    c = {static_cast<uint32_t>(a.top_k), f.mass_before + mass_at(f, r)};
  }
  if (a.top_p < 1.0f) {
    const double want = ceil(static_cast<double>(a.top_p) * static_cast<double>(c.total));
    const uint64_t target = min(max(static_cast<uint64_t>(want), uint64_t{1}), c.total);
    const Found f = resolve(sh, r, {Seek::kReach, target});
    if (f.pos + 1 < c.n) c = {f.pos + 1, f.mass_before + mass_at(f, r)};
  }
  if (a.min_p > 0.0f) {
    const Found f = resolve(sh, r, {Seek::kKeyPast, 0, desc_key(min_p_floor(r.m, a.min_p))});
    if (max(f.pos, 1u) < c.n) c = {max(f.pos, 1u), f.pos > 0 ? f.mass_before : mass_of(r.m, r.m)};
  }
  return c;
}

// The row's list: the first n entries of the order with their logprobs
// (s − m − log_total), then -1 and 0 up to the width.
__device__ __noinline__ void write_top(Shared& sh, const RowView& r, const Outputs& o, uint32_t n,
                                       double log_total) {
  int32_t* ids = o.top_ids + static_cast<int64_t>(blockIdx.x) * o.width;
  float* lps = o.top_logprobs + static_cast<int64_t>(blockIdx.x) * o.width;
  auto put = [&](uint32_t i, uint64_t k) {
    ids[i] = id_of(k);
    lps[i] = static_cast<float>(static_cast<double>(key_value(key_of(k))) - r.m - log_total);
  };
  for (uint32_t i = n + threadIdx.x; i < static_cast<uint32_t>(o.width); i += kThreads)
    ids[i] = -1, lps[i] = 0.0f;
  const Slice& g = sh.g.slice;
  if (g.count > 0 && g.pos0 == 0 && g.count >= n) {
    for (uint32_t i = threadIdx.x; i < n; i += kThreads) put(i, gathered_key64(sh, r, i));
    return;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const Found f = resolve(sh, r, {Seek::kAt, i});
    if (threadIdx.x == 0) put(i, f.key);
  }
}

__device__ __forceinline__ void write_token(const Outputs& o, int32_t id, float logprob) {
  if (threadIdx.x != 0) return;
  o.ids[blockIdx.x] = id;
  o.logprobs[blockIdx.x] = logprob;
}

// Greedy: the first element of the order; logprobs of the log-softmax.
__device__ __noinline__ void greedy_row(Shared& sh, const RowView& r, const RowArgs& a,
                                        const Outputs& o) {
  if (a.n_top < 0) {
    write_token(o, id_of(r.first), 0.0f);
    if (o.width > 0) write_top(sh, r, o, 0, 0.0);  // padding only
    return;
  }
  uint64_t z = 0;
  if (a.n_top == 0) {
    for_each_element(r, [&](int32_t, float s) { z += mass_of(s, r.m); });
    z = block_fold(z, AddOp{}, sh.fold);
  } else {
    build_bins(sh, r);
    z = sh.level0.mass[kBins - 1];
    pregather(sh, r, static_cast<uint32_t>(a.n_top), false, 0);
  }
  const double log_total = log(static_cast<double>(z) * kMassUnit);
  write_token(o, id_of(r.first), static_cast<float>(-log_total));
  if (o.width > 0)
    write_top(sh, r, o, min(static_cast<uint32_t>(max(a.n_top, 0)), static_cast<uint32_t>(r.vocab)),
              log_total);
}

// Sampled: the cuts, then the inverse CDF at u.
__device__ __noinline__ void sampled_row(Shared& sh, const RowView& r, const RowArgs& a,
                                         const Outputs& o) {
  build_bins(sh, r);
  const uint64_t z = sh.level0.mass[kBins - 1];
  if (z == 0) {  // no finite logit: unspecified, but a valid id
    write_token(o, id_of(r.first), 0.0f);
    if (o.width > 0) write_top(sh, r, o, 0, 0.0);
    return;
  }
  const float u = philox_uniform(a.seed, a.step);
  const bool cuts = (a.top_k > 0 && a.top_k < r.vocab) || a.top_p < 1.0f || a.min_p > 0.0f;
  pregather(sh, r, kCap, !cuts && a.n_top <= 0, draw_target(u, z));
  const Cut c = cut_of(sh, r, a, z);
  const Found f = resolve(sh, r, {Seek::kAbove, draw_target(u, c.total)});
  const double log_total = log(static_cast<double>(c.total) * kMassUnit);
  const double lp = static_cast<double>(key_value(key_of(f.key))) - r.m - log_total;
  write_token(o, id_of(f.key), a.n_top < 0 ? 0.0f : static_cast<float>(lp));
  if (o.width > 0) write_top(sh, r, o, min(static_cast<uint32_t>(max(a.n_top, 0)), c.n), log_total);
}

}  // namespace cairn::cuda::sampling
