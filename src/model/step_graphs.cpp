#include "model/step_graphs.h"

#include <algorithm>
#include <cstdio>

#include "backend/op_profile.h"
#include "core/error.h"

namespace cairn {

std::vector<int64_t> graph_buckets(int64_t max_batch) {
  std::vector<int64_t> b;
  for (int64_t s = 1; s <= max_batch && s < 8; s *= 2) b.push_back(s);
  for (int64_t s = 8; s <= max_batch && s <= 64; s += 8) b.push_back(s);
  for (int64_t s = 80; s <= max_batch; s += 16) b.push_back(s);
  if (max_batch > 0 && b.back() != max_batch) b.push_back(max_batch);
  return b;
}

StepGraphs::StepGraphs(DeviceBackend& backend, int64_t max_batch)
    : backend_(backend),
      buckets_(backend.supports_graphs() ? graph_buckets(max_batch) : std::vector<int64_t>{}) {}

StepGraphs::~StepGraphs() {
  for (auto& [key, ids] : graphs_)
    for (GraphId g : ids) backend_.release(g);
}

int64_t StepGraphs::bucket_for(const ForwardBatch& batch) const {
  const int64_t n = batch.n_tokens();
  if (buckets_.empty() || n > buckets_.back() || n == 0) return 0;
  if (static_cast<int64_t>(batch.spans.size()) != n) return 0;  // some span has 2+ rows
  if (ops::op_profile_open(backend_.device().kind)) return 0;
  if (n < backend_.min_graph_batch()) return 0;
  return *std::lower_bound(buckets_.begin(), buckets_.end(), n);
}

void StepGraphs::run(int64_t bucket, int n_segments, const Part& segment, const Part& gap) {
  auto eagerly = [&] {
    for (int s = 0; s < n_segments; ++s) {
      segment(s);
      if (s + 1 < n_segments) gap(s);
    }
  };
  if (bucket == 0) return eagerly();
  const auto key = std::make_pair(bucket, backend_.batch_invariant());
  auto found = graphs_.find(key);
  if (found != graphs_.end() && !found->second.empty()) {
    backend_.prepare_replays(found->second, 0);  // the step's inputs are set; the gaps read none
    for (int s = 0; s < n_segments; ++s) {
      backend_.replay(found->second[static_cast<size_t>(s)], 0);
      if (s + 1 < n_segments) gap(s);
    }
    return;
  }
  eagerly();
  if (found != graphs_.end()) return;  // a capture of this bucket failed: it stays eager
  std::vector<GraphId> ids;
  try {
    capture(ids, n_segments, segment);
  } catch (const Error& e) {
    std::fprintf(stderr, "cairn: decode graphs for batch %lld not captured (%s); it runs eagerly\n",
                 static_cast<long long>(bucket), e.what());
  }
  graphs_[key] = std::move(ids);
}

// Captures each segment; on a failure the open capture is closed and what was made released.
void StepGraphs::capture(std::vector<GraphId>& into, int n_segments, const Part& segment) {
  try {
    for (int s = 0; s < n_segments; ++s) {
      backend_.begin_capture(0);
      try {
        segment(s);
      } catch (...) {
        try {
          backend_.release(backend_.end_capture(0));
        } catch (...) {
        }
        throw;
      }
      into.push_back(backend_.end_capture(0));
    }
  } catch (...) {
    for (GraphId g : into) backend_.release(g);
    into.clear();
    throw;
  }
}

size_t StepGraphs::n_graphs() const {
  size_t n = 0;
  for (const auto& [key, ids] : graphs_) n += ids.size();
  return n;
}

}  // namespace cairn
