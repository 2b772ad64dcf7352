// StepGraphs' buckets and when a step may use them (the capture itself runs on a GPU:
// tests/gpu/models/step_graphs_test.cpp).
#include "model/step_graphs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/device.h"
#include "core/error.h"

namespace cairn {
namespace {

TEST(GraphBuckets, PowersOfTwoThenEightsThenSixteens) {
  EXPECT_EQ(graph_buckets(0), std::vector<int64_t>{});
  EXPECT_EQ(graph_buckets(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(graph_buckets(6), (std::vector<int64_t>{1, 2, 4, 6}));
  EXPECT_EQ(graph_buckets(20), (std::vector<int64_t>{1, 2, 4, 8, 16, 20}));
  EXPECT_EQ(graph_buckets(128),
            (std::vector<int64_t>{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128}));
}

ForwardBatch decode_batch(int n) {
  ForwardBatch b;
  for (int i = 0; i < n; ++i) {
    b.tokens.push_back(1), b.positions.push_back(i);
    b.spans.push_back({i, i, 1, true});
  }
  return b;
}

// A backend that claims graphs, so bucket_for's rules show without a GPU.
class GraphBackend final : public DeviceBackend {
 public:
  Device device() const override { return Device::cpu(); }
  std::shared_ptr<Storage> allocate(size_t) override { return nullptr; }
  std::shared_ptr<Storage> allocate_pinned_host(size_t) override { return nullptr; }
  size_t free_bytes() const override { return 0; }
  size_t total_bytes() const override { return 0; }
  void copy(const Tensor&, Tensor&, StreamId) override {}
  void synchronize(StreamId) override {}
  void copy_columns(const Tensor&, int64_t, Tensor&, int64_t, int64_t, StreamId) override {}
  void zero(Tensor&, StreamId) override {}
  void fill_uniform(Tensor&, uint64_t, float, float) override {}
  void start_op_profile() override {}
  std::string stop_op_profile() override { return {}; }
  bool supports_graphs() const override { return true; }
  void begin_capture(StreamId) override { capturing = true; }
  GraphId end_capture(StreamId) override {
    capturing = false;
    return next_id++;
  }
  void replay(GraphId g, StreamId) override { replayed.push_back(g); }
  void prepare_replays(std::span<const GraphId> graphs, StreamId) override {
    EXPECT_EQ(replayed.size(), prepared.size()) << "prepared after a replay of the step";
    prepared.insert(prepared.end(), graphs.begin(), graphs.end());
  }
  void release(GraphId g) override { released.push_back(g); }
  int device_count() const override { return 1; }
  void bind_thread(int) override {}
  std::unique_ptr<RankGroup> make_rank_group(const std::vector<int>&) override { return nullptr; }

  bool capturing = false;
  GraphId next_id = 0;
  std::vector<GraphId> replayed, released, prepared;
};

TEST(StepGraphs, OnlyDecodeBatchesUpToTheLargestBucket) {
  GraphBackend backend;
  StepGraphs g(backend, 16);
  EXPECT_EQ(g.bucket_for(decode_batch(1)), 1);
  EXPECT_EQ(g.bucket_for(decode_batch(3)), 4);
  EXPECT_EQ(g.bucket_for(decode_batch(9)), 16);
  EXPECT_EQ(g.bucket_for(decode_batch(17)), 0) << "above the largest bucket";
  ForwardBatch prefill = decode_batch(3);
  prefill.spans = {{0, 0, 2, true}, {1, 2, 1, true}};
  EXPECT_EQ(g.bucket_for(prefill), 0) << "a span of two rows";
  EXPECT_EQ(StepGraphs(backend, 0).bucket_for(decode_batch(1)), 0) << "--enforce-eager";
  EXPECT_EQ(StepGraphs(device_backend(DeviceKind::kCpu), 16).bucket_for(decode_batch(1)), 0)
      << "a backend without graphs";
}

// A bucket's first step runs its segments eagerly, then captures each; later steps replay
// them, with the eager gaps between; the graphs are released with the StepGraphs.
TEST(StepGraphs, FirstStepRunsEagerlyThenCapturesThenReplays) {
  GraphBackend backend;
  std::vector<std::string> log;
  {
    StepGraphs g(backend, 8);
    auto segment = [&](int s) {
      log.push_back((backend.capturing ? "capture " : "run ") + std::to_string(s));
    };
    auto gap = [&](int s) { log.push_back("gap " + std::to_string(s)); };
    g.run(4, 3, segment, gap);
    EXPECT_EQ(log, (std::vector<std::string>{"run 0", "gap 0", "run 1", "gap 1", "run 2",
                                             "capture 0", "capture 1", "capture 2"}));
    log.clear();
    g.run(4, 3, segment, gap);
    EXPECT_EQ(log, (std::vector<std::string>{"gap 0", "gap 1"}));
    EXPECT_EQ(backend.replayed, (std::vector<GraphId>{0, 1, 2}));
    EXPECT_EQ(backend.prepared, (std::vector<GraphId>{0, 1, 2})) << "once, before the replays";
    EXPECT_EQ(g.n_graphs(), 3u);
    log.clear();
    g.run(0, 3, segment, gap);  // bucket 0: eager, nothing captured
    EXPECT_EQ(log, (std::vector<std::string>{"run 0", "gap 0", "run 1", "gap 1", "run 2"}));
    EXPECT_EQ(g.n_graphs(), 3u);
  }
  EXPECT_EQ(backend.released, (std::vector<GraphId>{0, 1, 2}));
}

// A capture that fails leaves its bucket eager (the step itself already ran), not an error.
TEST(StepGraphs, AFailedCaptureLeavesTheBucketEager) {
  GraphBackend backend;
  StepGraphs g(backend, 8);
  int runs = 0;
  auto segment = [&](int s) {
    if (backend.capturing && s == 1) fail(ErrorCode::kUnsupported, "not capturable");
    if (!backend.capturing) ++runs;
  };
  g.run(2, 3, segment, [](int) {});
  g.run(2, 3, segment, [](int) {});
  EXPECT_EQ(runs, 6) << "both steps eager";
  EXPECT_EQ(g.n_graphs(), 0u);
  EXPECT_EQ(backend.released, (std::vector<GraphId>{1, 0})) << "the failed one, then the one made";
  EXPECT_TRUE(backend.replayed.empty());
  EXPECT_TRUE(backend.prepared.empty());
}

}  // namespace
}  // namespace cairn
