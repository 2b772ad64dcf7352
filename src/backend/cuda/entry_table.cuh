// Kernels that serve many row blocks (or sequences) in one launch find theirs
// in a table of entries sorted by where each starts in the launch's index space
// (its first grid block, first group, ...). A small table travels in the kernel's
// parameters; a larger one, or one of a launch being captured into a graph (whose
// uploads are refreshed at every replay), is uploaded.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/graph_store.h"

namespace cairn::cuda {

// The last of the n entries (n ≥ 1, ascending by the member Begin, the first
// starting at 0) whose Begin is at or before x, of an index space of `total`.
// Where every entry spans as much of it (a decode step's rows), the proportional
// guess is the entry: two independent loads instead of a binary search.
template <auto Begin, typename Entry>
__device__ __forceinline__ const Entry& entry_at(const Entry* entries, int n, int64_t x,
                                                 int64_t total) {
  const int guess = static_cast<int>(x * n / total);
  if (static_cast<int64_t>(entries[guess].*Begin) <= x &&
      (guess + 1 == n || static_cast<int64_t>(entries[guess + 1].*Begin) > x))
    return entries[guess];
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (static_cast<int64_t>(entries[mid].*Begin) <= x)
      lo = mid;
    else
      hi = mid - 1;
  }
  return entries[lo];
}

// Up to N entries held by value (`uploaded` null), or the device copy of more. A kernel takes it
// as `const __grid_constant__ EntryTable<Entry, N>`, so that entries() points into its
// parameters instead of a per-thread copy of them. Holding them puts no copy on the stream
// between the kernel and the one before it, which may then overlap (launch.h).
template <typename Entry, int N>
struct EntryTable {
  const Entry* uploaded = nullptr;
  Entry held[N];
  __device__ __forceinline__ const Entry* entries() const { return uploaded ? uploaded : held; }
};

template <int N, typename Entry>
EntryTable<Entry, N> entry_table(std::span<const Entry> entries) {
  EntryTable<Entry, N> t{};
  if (entries.size() <= static_cast<size_t>(N) && !capturing_uploads())
    std::copy(entries.begin(), entries.end(), t.held);
  else
    t.uploaded = upload(entries);
  return t;
}

}  // namespace cairn::cuda
