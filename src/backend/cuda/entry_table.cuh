// Kernels that serve many row blocks (or sequences) in one launch find theirs
// in an uploaded table of entries sorted by where each starts in the launch's
// index space (its first grid block, first group, ...): a binary search.
#pragma once

#include <cstdint>

namespace cairn::cuda {

// The last of the n entries (n ≥ 1, ascending by the member Begin, the first
// starting at 0) whose Begin is at or before x.
template <auto Begin, typename Entry>
__device__ __forceinline__ const Entry& entry_at(const Entry* entries, int n, int64_t x) {
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

}  // namespace cairn::cuda
