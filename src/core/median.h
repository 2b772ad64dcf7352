// The median of timed runs, as every benchmark reports them.
#pragma once

#include <algorithm>
#include <vector>

namespace cairn {

// The upper median of v (v[n / 2] once sorted); 0 for no values.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace cairn
