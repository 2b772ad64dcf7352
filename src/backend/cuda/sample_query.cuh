// Finding one place in a row's order (sample_rows.cu): the element at a
// position, where the cumulative mass first exceeds or reaches a target, or
// where the keys pass a threshold. From the sorted slice when it holds the
// answer; else the row's bins name the bucket that does, which is sorted
// (gather) when it has at most kCap elements, else split again by key, 11
// bits at a time; a bucket of one key (ties of one s) is resolved by rank
// among its ids in a scan of the row in id order. Every thread of the block
// runs the same steps on the same shared data.
#pragma once

#include "backend/cuda/sample_hist.cuh"

namespace cairn::cuda::sampling {

enum class Seek : uint8_t {
  kAt,       // the element at position target
  kAbove,    // the first whose cumulative mass is > target
  kReach,    // the first whose cumulative mass is ≥ target
  kKeyPast,  // the first whose key is > key (possibly the end)
};

struct Query {
  Seek seek;
  uint64_t target = 0;
  uint32_t key = 0;
};

struct Found {
  uint32_t pos = 0;          // its position in the order
  uint64_t mass_before = 0;  // of the elements before it
  uint64_t key = 0;          // its key64 (kKeyPast: unset)
};

__device__ __forceinline__ uint32_t key_of(uint64_t k64) {
  return static_cast<uint32_t>(k64 >> 32);
}
__device__ __forceinline__ int32_t id_of(uint64_t k64) {
  return static_cast<int32_t>(k64 & 0xffffffffu);
}
__device__ __forceinline__ uint64_t mass_at(const Found& f, const RowView& r) {
  return mass_of(key_value(key_of(f.key)), r.m);
}

// Whether the sorted slice holds q's answer.
__device__ __forceinline__ bool holds(const Shared& sh, const RowView& r, const Query& q) {
  const Slice& s = sh.g.slice;
  if (s.count == 0) return false;
  switch (q.seek) {
    case Seek::kAt:
      return q.target >= s.pos0 && q.target < s.pos0 + s.count;
    case Seek::kAbove:
      return q.target >= s.mass0 && q.target < s.mass0 + s.mass;
    case Seek::kReach:
      return q.target > s.mass0 && q.target <= s.mass0 + s.mass;
    case Seek::kKeyPast:
      return key_of(gathered_key64(sh, r, 0)) <= q.key &&
             q.key < key_of(gathered_key64(sh, r, s.count - 1));
  }
  return false;
}

// The first i in [0, n) with pred(i), n when none (pred monotone).
template <typename Pred>
__device__ __forceinline__ uint32_t first_where(uint32_t n, Pred pred) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (pred(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// q's answer in the sorted slice (which holds it, or for kKeyPast, the bucket of q.key).
__device__ __forceinline__ Found search(const Shared& sh, const RowView& r, const Query& q) {
  const Slice& s = sh.g.slice;
  uint32_t i = 0;
  switch (q.seek) {
    case Seek::kAt:
      i = static_cast<uint32_t>(q.target - s.pos0);
      break;
    case Seek::kAbove:
      i = first_where(s.count, [&](uint32_t k) { return sh.cum[k] > q.target; });
      break;
    case Seek::kReach:
      i = first_where(s.count, [&](uint32_t k) { return sh.cum[k] >= q.target; });
      break;
    case Seek::kKeyPast:
      i = first_where(s.count,
                      [&](uint32_t k) { return key_of(gathered_key64(sh, r, k)) > q.key; });
      break;
  }
  Found f;
  f.pos = s.pos0 + i;
  f.mass_before = i > 0 ? sh.cum[i - 1] : s.mass0;
  if (i < s.count) f.key = gathered_key64(sh, r, i);
  return f;
}

// The bucket of histogram h (over slice s) holding q's answer.
__device__ __forceinline__ int pick_bucket(const Hist& h, const Slice& s, const Query& q, bool bins,
                                           int shift, const RowView& r) {
  switch (q.seek) {
    case Seek::kAt:
      return first_where(kBins, [&](uint32_t b) { return s.pos0 + h.count[b] > q.target; });
    case Seek::kAbove:
      return first_where(kBins, [&](uint32_t b) { return s.mass0 + h.mass[b] > q.target; });
    case Seek::kReach:
      return first_where(kBins, [&](uint32_t b) { return s.mass0 + h.mass[b] >= q.target; });
    case Seek::kKeyPast:
      if (bins) return bin_of(key_value(q.key), r);
      if (q.key < s.key_lo) return 0;
      return min(static_cast<int>((min(q.key, s.key_hi) - s.key_lo) >> shift), kBins - 1);
  }
  return 0;
}

// The rank-th smallest id whose key is `key` (a scan of the row in id order,
// kCap ids at a time, thread t taking four consecutive ones).
__device__ __noinline__ int32_t id_of_rank(Shared& sh, const RowView& r, uint32_t key,
                                           uint32_t rank) {
  if (threadIdx.x == 0) sh.found_id = -1;
  uint32_t seen = 0;  // matches in earlier tiles
  for (int64_t base = 0; base < r.vocab; base += kCap) {
    uint32_t flags = 0, n = 0;
    for (int j = 0; j < kItems; ++j) {
      const int64_t id = base + threadIdx.x * kItems + j;
      if (id < r.vocab && desc_key(scaled(r.logits[id], r.inv_t)) == key) flags |= 1u << j, ++n;
    }
    uint32_t before = 0, total = 0;
    __syncthreads();  // the scan's storage is free
    Scan32(sh.temp.scan32).ExclusiveSum(n, before, total);
    for (int j = 0, k = seen + before; j < kItems; ++j)
      if ((flags & (1u << j)) != 0 && k++ == rank)
        sh.found_id = static_cast<int32_t>(base + threadIdx.x * kItems + j);
    seen += total;
    __syncthreads();
    if (sh.found_id >= 0) break;
  }
  const int32_t id = sh.found_id;
  __syncthreads();  // read by all before a later call resets it
  return id;
}

// A position query's answer inside slice s, all of whose elements have one key
// (so one mass): its rank there by count or mass, then the id of that rank.
__device__ __noinline__ Found tie_answer(Shared& sh, const RowView& r, const Slice& s,
                                         const Query& q) {
  const uint64_t w = mass_of(key_value(s.key_lo), r.m);
  uint64_t j = 0;
  if (q.seek == Seek::kAt) j = q.target - s.pos0;
  if (q.seek == Seek::kAbove && w > 0) j = (q.target - s.mass0) / w;
  if (q.seek == Seek::kReach && w > 0) j = (q.target - s.mass0 - 1) / w;
  j = min(j, static_cast<uint64_t>(s.count - 1));
  Found f;
  f.pos = s.pos0 + static_cast<uint32_t>(j);
  f.mass_before = s.mass0 + j * w;
  f.key = key64(s.key_lo, id_of_rank(sh, r, s.key_lo, static_cast<uint32_t>(j)));
  return f;
}

// q's answer anywhere in the row.
__device__ __noinline__ Found resolve(Shared& sh, const RowView& r, const Query& q) {
  if (holds(sh, r, q)) return search(sh, r, q);
  Slice s;  // the whole row
  s.count = sh.level0.count[kBins - 1], s.mass = sh.level0.mass[kBins - 1];
  bool bins = true;
  int shift = 0;
  for (;;) {
    const Hist& h = bins ? sh.level0 : sh.sub;
    Slice t = bucket_slice(h, s, pick_bucket(h, s, q, bins, shift, r), bins, shift);
    if (q.seek == Seek::kKeyPast && t.count == 0) return Found{t.pos0, t.mass0, 0};
    if (t.count <= kCap) {
      gather(sh, r, t);
      return search(sh, r, q);
    }
    if (bins) key_range(sh, r, t);
    if (q.seek == Seek::kKeyPast && (q.key < t.key_lo || q.key >= t.key_hi)) {
      const bool all = q.key >= t.key_hi;  // every key of t is ≤ q.key, or none is
      return Found{t.pos0 + (all ? t.count : 0), t.mass0 + (all ? t.mass : 0), 0};
    }
    if (t.key_lo == t.key_hi) return tie_answer(sh, r, t, q);
    const int bits = 32 - __clz(static_cast<int>(t.key_hi - t.key_lo));
    shift = bits > 11 ? bits - 11 : 0;
    build_buckets(sh, r, t, shift);
    s = t;
    bins = false;
  }
}

}  // namespace cairn::cuda::sampling
