// Histograms and sorted candidates of one row (sample_rows.cu). A Slice is a
// run of the row's order (s descending, ties by id): the elements of some bins
// whose keys lie in a range. A histogram splits a slice into buckets, counting
// each bucket's elements and summing their masses; gather() sorts a slice of at
// most kCap elements into shared memory with each one's position and cumulative
// mass in the order. Everything is integer counting or an order-independent
// reduction, then CUB's stable radix sort of distinct keys: the bits do not
// depend on thread timing, the other rows or their number.
#pragma once

#include <cub/cub.cuh>

#include "backend/cuda/sample_keys.cuh"

namespace cairn::cuda::sampling {

// A run of the order: bins [bin_lo, bin_hi] of the row, keys [key_lo, key_hi].
struct Slice {
  int32_t bin_lo = 0, bin_hi = kBins - 1;
  uint32_t key_lo = 0, key_hi = 0xffffffffu;
  uint32_t pos0 = 0, count = 0;  // elements before it in the order; in it
  uint64_t mass0 = 0, mass = 0;  // their masses
};

__device__ __forceinline__ bool in_slice(const Slice& s, int bin, uint32_t key) {
  return bin >= s.bin_lo && bin <= s.bin_hi && key >= s.key_lo && key <= s.key_hi;
}

// Inclusive prefix sums of a histogram's buckets once built (while counting,
// `mass` holds the low words in its first half and the high words in its second).
struct Hist {
  uint32_t count[kBins];
  uint64_t mass[kBins];
};

using Sort = cub::BlockRadixSort<uint64_t, kThreads, kItems>;
using Scan64 = cub::BlockScan<uint64_t, kThreads>;
using Scan32 = cub::BlockScan<uint32_t, kThreads>;

// The sorted slice: keys[i] = (key − key_base) << id_bits | id, cum[i] = the
// mass of the order up to and including element i (pos0 + i).
struct Gathered {
  Slice slice;  // count 0: nothing gathered
  uint32_t key_base = 0;
};

struct Shared {
  Hist level0;  // the row's bins
  Hist sub;     // the buckets of one refinement step
  uint64_t keys[kCap];
  uint64_t cum[kCap];
  union {
    Sort::TempStorage sort;
    Scan64::TempStorage scan64;
    Scan32::TempStorage scan32;
  } temp;
  Gathered g;
  uint64_t fold[32];  // block_fold's scratch
  uint32_t counter;
  int32_t found_id;
};

__device__ __forceinline__ void clear(Hist& h) {
  __syncthreads();  // every thread is done reading h
  for (int i = threadIdx.x; i < kBins; i += kThreads) h.count[i] = 0, h.mass[i] = 0;
  __syncthreads();
}

// One element into bucket b: a count, and its mass as two 32-bit words (the
// low word's carry goes to the high one): exact, so order-independent.
__device__ __forceinline__ void add_to(Hist& h, int b, uint64_t q) {
  atomicAdd(&h.count[b], 1u);
  uint32_t* lo = reinterpret_cast<uint32_t*>(h.mass);
  const uint32_t q_lo = static_cast<uint32_t>(q);
  uint32_t q_hi = static_cast<uint32_t>(q >> 32);
  if (q_lo != 0 && atomicAdd(&lo[b], q_lo) + q_lo < q_lo) ++q_hi;  // the low word wrapped
  if (q_hi != 0) atomicAdd(&lo[kBins + b], q_hi);
}

// Counts and words into inclusive prefix sums over the buckets in order.
__device__ __forceinline__ void prefix_sums(Shared& sh, Hist& h) {
  static_assert(kBins % kThreads == 0, "whole buckets per thread");
  constexpr int kPer = kBins / kThreads;
  const uint32_t* words = reinterpret_cast<const uint32_t*>(h.mass);
  uint32_t c[kPer];
  uint64_t w[kPer];
  for (int j = 0; j < kPer; ++j) {
    const int b = threadIdx.x * kPer + j;
    c[j] = h.count[b];
    w[j] = (static_cast<uint64_t>(words[kBins + b]) << 32) | words[b];
  }
  __syncthreads();  // every word read before mass is rewritten
  Scan32(sh.temp.scan32).InclusiveSum(c, c);
  __syncthreads();
  Scan64(sh.temp.scan64).InclusiveSum(w, w);
  for (int j = 0; j < kPer; ++j)
    h.count[threadIdx.x * kPer + j] = c[j], h.mass[threadIdx.x * kPer + j] = w[j];
  __syncthreads();
}

// The row's bins: bin_of over the whole row.
__device__ __noinline__ void build_bins(Shared& sh, const RowView& r) {
  clear(sh.level0);
  for_each_element(r, [&](int32_t, float s) { add_to(sh.level0, bin_of(s, r), mass_of(s, r.m)); });
  __syncthreads();
  prefix_sums(sh, sh.level0);
}

// Slice s split by key: bucket (key − s.key_lo) >> shift.
__device__ __noinline__ void build_buckets(Shared& sh, const RowView& r, const Slice& s,
                                           int shift) {
  clear(sh.sub);
  for_each_element(r, [&](int32_t, float v) {
    const uint32_t key = desc_key(v);
    if (in_slice(s, bin_of(v, r), key))
      add_to(sh.sub, static_cast<int>((key - s.key_lo) >> shift), mass_of(v, r.m));
  });
  __syncthreads();
  prefix_sums(sh, sh.sub);
}

// The smallest and largest key in slice s (one pass).
__device__ __noinline__ void key_range(Shared& sh, const RowView& r, Slice& s) {
  uint32_t lo = 0xffffffffu, hi = 0;
  for_each_element(r, [&](int32_t, float v) {
    const uint32_t key = desc_key(v);
    if (in_slice(s, bin_of(v, r), key)) lo = min(lo, key), hi = max(hi, key);
  });
  const uint32_t lo_all = block_fold(lo, MinOp{}, reinterpret_cast<uint32_t*>(sh.fold));
  const uint32_t hi_all = block_fold(hi, MaxOp{}, reinterpret_cast<uint32_t*>(sh.fold));
  s.key_lo = lo_all, s.key_hi = hi_all;
}

// Bucket b of histogram h over slice s (level 0: bins; else keys by shift).
__device__ __forceinline__ Slice bucket_slice(const Hist& h, const Slice& s, int b, bool bins,
                                              int shift) {
  Slice t = s;
  const uint32_t c0 = b > 0 ? h.count[b - 1] : 0;
  const uint64_t m0 = b > 0 ? h.mass[b - 1] : 0;
  t.pos0 = s.pos0 + c0, t.count = h.count[b] - c0;
  t.mass0 = s.mass0 + m0, t.mass = h.mass[b] - m0;
  if (bins) {
    t.bin_lo = t.bin_hi = b;
  } else {
    t.key_lo = s.key_lo + (static_cast<uint32_t>(b) << shift);
    const uint64_t end = static_cast<uint64_t>(t.key_lo) + (1ull << shift) - 1;
    t.key_hi = static_cast<uint32_t>(min(static_cast<uint64_t>(s.key_hi), end));
  }
  return t;
}

// Loads the gathered elements (sh.keys[0, n) as key64) sorted into registers,
// as relative keys; returns the smallest key.
__device__ __noinline__ uint32_t sort_gathered(Shared& sh, const RowView& r, uint32_t n,
                                               uint64_t (&items)[kItems]) {
  uint32_t lo = 0xffffffffu, hi = 0;
  for (int j = 0; j < kItems; ++j) {
    const uint32_t i = threadIdx.x * kItems + j;
    items[j] = i < n ? sh.keys[i] : ~0ull;
    if (i < n)
      lo = min(lo, static_cast<uint32_t>(items[j] >> 32)),
      hi = max(hi, static_cast<uint32_t>(items[j] >> 32));
  }
  lo = block_fold(lo, MinOp{}, reinterpret_cast<uint32_t*>(sh.fold));
  hi = block_fold(hi, MaxOp{}, reinterpret_cast<uint32_t*>(sh.fold));
  for (int j = 0; j < kItems; ++j)
    if (threadIdx.x * kItems + j < n)
      items[j] =
          (static_cast<uint64_t>((items[j] >> 32) - lo) << r.id_bits) | (items[j] & 0xffffffffu);
  const int end_bit = r.id_bits + (32 - __clz(static_cast<int>(hi - lo)));
  Sort(sh.temp.sort).Sort(items, 0, end_bit);  // stable: the padding stays last
  __syncthreads();
  return lo;
}

// Sorts slice s (s.count ≤ kCap) into sh.keys and sh.cum; sh.g describes it.
__device__ __noinline__ void gather(Shared& sh, const RowView& r, const Slice& s) {
  if (threadIdx.x == 0) sh.counter = 0;
  __syncthreads();
  for_each_element(r, [&](int32_t id, float v) {
    const uint32_t key = desc_key(v);
    if (!in_slice(s, bin_of(v, r), key)) return;
    const uint32_t slot = atomicAdd(&sh.counter, 1u);
    if (slot < kCap) sh.keys[slot] = key64(key, id);
  });
  __syncthreads();
  uint64_t items[kItems];
  const uint32_t base = sort_gathered(sh, r, s.count, items);
  uint64_t w[kItems];
  for (int j = 0; j < kItems; ++j)
    w[j] = threadIdx.x * kItems + j < s.count
               ? mass_of(key_value(static_cast<uint32_t>(items[j] >> r.id_bits) + base), r.m)
               : 0;
  Scan64(sh.temp.scan64).InclusiveSum(w, w);
  for (int j = 0; j < kItems; ++j) {
    const uint32_t i = threadIdx.x * kItems + j;
    if (i < s.count) sh.keys[i] = items[j], sh.cum[i] = s.mass0 + w[j];
  }
  if (threadIdx.x == 0) sh.g = {s, base};
  __syncthreads();
}

// Gathered element i as key64.
__device__ __forceinline__ uint64_t gathered_key64(const Shared& sh, const RowView& r, uint32_t i) {
  const uint64_t rel = sh.keys[i];
  return key64(static_cast<uint32_t>(rel >> r.id_bits) + sh.g.key_base,
               static_cast<int32_t>(rel & ((1ull << r.id_bits) - 1)));
}

}  // namespace cairn::cuda::sampling
