// CUDA graphs on the backend (DeviceBackend::begin_capture … replay): a captured op
// runs only at replay, reads the host arguments it uploaded from their host
// addresses as they are then (a step's positions), and a released graph is gone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/reference/reference.h"
#include "backend/device.h"
#include "backend/ops.h"
#include "core/error.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

DeviceBackend& gpu() {
  return device_backend(DeviceKind::kCuda);
}

// x rotated on the CPU reference at `positions`.
Tensor rotated(const Tensor& x, const std::vector<int32_t>& positions, const ops::RopeParams& p) {
  Tensor ref = Tensor::empty(x.shape(), DType::kF32);
  std::copy_n(x.data<float>(), x.numel(), ref.data<float>());
  ops::ref::rope(ref, positions, p);
  return ref;
}

// The rope the graphs capture here: head_dim 16, half-split (params() points into inv).
struct TestRope {
  std::vector<float> inv;
  TestRope() {
    for (int i = 0; i < 8; ++i) inv.push_back(std::pow(10000.0f, -i / 8.0f));
  }
  TestRope(const TestRope&) = delete;
  ops::RopeParams params() const { return {inv, 16, ops::RopeLayout::kHalfSplit, 1.0f}; }
};

TEST(CudaGraphs, ReplayReadsUploadsFromTheirHostAddresses) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(7);
  const Tensor x = random_host({3, 4, 16}, DType::kF32, rng, 2.0f);
  const TestRope rope;
  const ops::RopeParams p = rope.params();
  std::vector<int32_t> positions = {1, 2, 3};  // the graph reads it here at every replay
  Tensor xd = to_device(x);
  DeviceBackend& dev = gpu();
  dev.begin_capture(0);
  ops::rope(xd, positions, p);
  const GraphId g = dev.end_capture(0);
  EXPECT_EQ(rel_error(to_host(xd), x), 0.0) << "a captured op ran before its replay";

  for (const std::vector<int32_t>& now :
       {std::vector<int32_t>{7, 0, 4242}, std::vector<int32_t>{100, 5, 9}}) {
    positions = now;
    dev.copy(x, xd);
    dev.replay(g, 0);
    EXPECT_LE(rel_error(to_host(xd), rotated(x, now, p)), 1e-5) << "positions " << now[0];
  }
  dev.release(g);
  EXPECT_THROW(dev.replay(g, 0), Error);
}

// Graphs captured one after another, prepared together (their uploads read at prepare and
// copied up ahead of the first replay), then replayed in order; then replayed unprepared.
TEST(CudaGraphs, PreparedReplaysReadTheHostValuesAtPrepare) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(9);
  const Tensor x = random_host({3, 4, 16}, DType::kF32, rng, 2.0f);
  const TestRope rope;
  const ops::RopeParams p = rope.params();
  std::vector<int32_t> first = {1, 2, 3}, second = {4, 5, 6};
  Tensor a = to_device(x), b = to_device(x);
  DeviceBackend& dev = gpu();
  std::vector<GraphId> graphs;
  for (int i = 0; i < 3; ++i) {  // the middle graph uploads nothing
    dev.begin_capture(0);
    if (i == 0) ops::rope(a, first, p);
    if (i == 2) ops::rope(b, second, p);
    graphs.push_back(dev.end_capture(0));
  }
  for (bool prepare : {true, false, true}) {
    first = {prepare ? 11 : 21, 0, 4242}, second = {prepare ? 31 : 41, 5, 9};
    const std::vector<int32_t> want_first = first, want_second = second;
    dev.copy(x, a);
    dev.copy(x, b);
    if (prepare) {
      dev.prepare_replays(graphs, 0);
      first = {-1, -1, -1}, second = {-1, -1, -1};  // read at prepare, not at replay
    }
    for (GraphId g : graphs) dev.replay(g, 0);
    EXPECT_LE(rel_error(to_host(a), rotated(x, want_first, p)), 1e-5) << "prepared " << prepare;
    EXPECT_LE(rel_error(to_host(b), rotated(x, want_second, p)), 1e-5) << "prepared " << prepare;
  }
  for (GraphId g : graphs) dev.release(g);
}

TEST(CudaGraphs, ArgumentsPastTheCapturesRoomAreAnError) {
  CAIRN_NEED_GPU();
  DeviceBackend& dev = gpu();
  std::mt19937 rng(8);
  const Tensor host_table = random_host({4, 8}, DType::kF32, rng);
  const Tensor table = to_device(host_table);
  const std::vector<int32_t> ids(40000, 1);  // 160 KB of ids: past a capture's 64 KiB
  Tensor out = poisoned_device({40000, 8}, DType::kF32);
  dev.begin_capture(0);
  EXPECT_THROW(ops::embedding(table, ids, out), Error);
  dev.release(dev.end_capture(0));
  ops::embedding(table, ids, out);  // the stream works eagerly again
  Tensor want = Tensor::empty({40000, 8}, DType::kF32);
  ops::embedding(host_table, ids, want);
  EXPECT_EQ(rel_error(to_host(out), want), 0.0);
}

}  // namespace
}  // namespace cairn::gpu_test
