// CUDA graphs for decode steps. A decode step is issued as segments of launches
// separated by eager calls: segment 0 (embedding, first norm, layer 0's q/k/v),
// attention of layer 0 (it reads each sequence's KV length, so it stays eager),
// segment 1 (layer 0's output and MLP, layer 1's q/k/v), …, segment L (the last
// layer's output). Each segment is captured once per batch-size bucket over
// buffers whose addresses never move (the model's arena: a bucket runs on its
// first rows, the rows past the batch padded) and replayed at every later step
// of that bucket. The first step of a bucket runs eagerly and is then captured,
// so the buffers a capture relies on have already grown. A bucket's graphs are
// per state of the batch-invariant switch.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "backend/device.h"
#include "model/forward_batch.h"

namespace cairn {

// The batch sizes graphs are captured for, up to max_batch: 1, 2, 4, 8, then every 8
// to 64, then every 16 (vLLM's capture sizes, to 128 by default).
std::vector<int64_t> graph_buckets(int64_t max_batch);

class StepGraphs {
 public:
  // max_batch 0: every step runs eagerly.
  StepGraphs(DeviceBackend& backend, int64_t max_batch);
  ~StepGraphs();
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;

  int64_t max_batch() const { return buckets_.empty() ? 0 : buckets_.back(); }
  // The bucket a batch runs in: the smallest at or above its rows when every span is
  // one decode row; 0 (eager) for a prefill row, above the largest bucket, on a backend
  // without graphs, below the backend's min_graph_batch (faster issued as it goes), or while
  // an op-profile window is open (it times ops one by one).
  int64_t bucket_for(const ForwardBatch& batch) const;

  // Runs segments 0 … n_segments-1 in order with gap(s) after every segment but the
  // last: eagerly for bucket 0; else the bucket's graphs when captured, or eagerly and
  // then captures them.
  using Part = std::function<void(int)>;
  void run(int64_t bucket, int n_segments, const Part& segment, const Part& gap);

  // Graphs captured so far (all buckets and switch states).
  size_t n_graphs() const;

 private:
  void capture(std::vector<GraphId>& into, int n_segments, const Part& segment);

  DeviceBackend& backend_;
  std::vector<int64_t> buckets_;
  std::map<std::pair<int64_t, bool>, std::vector<GraphId>> graphs_;  // (bucket, invariant)
};

}  // namespace cairn
